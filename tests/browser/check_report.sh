#!/usr/bin/env bash
# Renders HTML reports in a real browser (Debian's headless Chromium,
# installed here if missing) and checks what rendered: the text of key cells
# against `toolenv report --json`, the sections, the SVG figures, and that the
# screenshot is a picture rather than a blank page. Artifacts (the pages, the
# DOM as Chromium built it, screenshots) are kept in target/browser/.
#
# Usage: tests/browser/check_report.sh   (from anywhere; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/browser
rm -rf "$out" && mkdir -p "$out"

# shellcheck source=tests/browser/chromium.sh
source tests/browser/chromium.sh
chromium --version

cargo build --locked --quiet -p toolenv-cli --bin toolenv
toolenv=target/debug/toolenv
store="$out/runs.db"
"$toolenv" run --grid paper --agent solver,brittle,reference-no-retry --store "$store" >/dev/null
"$toolenv" run --grid ablation --agent solver,brittle --store "$store" >/dev/null
"$toolenv" report run-0001 --html "$out/report.html" --store "$store"
"$toolenv" report run-0001 run-0002 --html "$out/compare.html" --store "$store"
"$toolenv" report run-0001 --json --store "$store" >"$out/run-0001.json"
"$toolenv" report run-0002 --json --store "$store" >"$out/run-0002.json"

# Headless, offline, with a throwaway profile: nothing is fetched or kept.
for page in report compare; do
    render "$out/$page.html" --dump-dom >"$out/$page.dom.html"
    render "$out/$page.html" --screenshot="$PWD/$out/$page.png" >/dev/null
done

python3 - "$out" <<'PY'
import json, sys
from html.parser import HTMLParser

sys.path.insert(0, "tests/browser")
from checks import expect, failures, png_is_a_picture

out = sys.argv[1]

class Dom(HTMLParser):
    """The text of every element with an id, the section ids and the SVG text count."""
    def __init__(self):
        super().__init__()
        self.stack, self.text, self.sections, self.svg_texts, self.svgs = [], {}, [], 0, 0
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        if tag == "svg":
            self.svgs += 1
        if tag == "text":
            self.svg_texts += 1
        if tag in ("meta", "br", "img", "link", "input", "hr", "col"):
            return
        self.stack.append(attrs.get("id"))
        if attrs.get("id"):
            self.text[attrs["id"]] = ""
    def handle_endtag(self, tag):
        if tag in ("meta", "br", "img", "link", "input", "hr", "col"):
            return
        # SVG children such as <line/> and <rect/> close themselves in the DOM dump too.
        if self.stack:
            self.stack.pop()
    def handle_data(self, data):
        for open_id in self.stack:
            if open_id:
                self.text[open_id] += data

def dom(name):
    parser = Dom()
    with open(f"{out}/{name}.dom.html", encoding="utf-8") as f:
        parser.feed(f.read())
    return parser

def ratio(value):
    return None if value is None else value["num"] / value["den"]

def pct(value, decimals=1):
    return "n/a" if value is None else f"{value * 100:.{decimals}f}%"


def check_run(page, run, summary):
    report = summary["report"]
    for field in ("planned", "recorded", "passed", "failed", "infra_errors", "infeasible"):
        expect(f"{run} {field}", page.text.get(f"{run}-{field}", "").strip(), str(report["counts"][field]))
    for a, agent in enumerate(report["agents"]):
        overall = agent["overall"]
        for key, field in (("pass-1", "pass_1"), ("pass-k", "pass_k")):
            shown = page.text.get(f"{run}-a{a}-{key}", "").split(" ")[0]
            expect(f"{run} {agent['agent']} {field}", shown, pct(ratio(overall[field]["value"])))
        for row in agent["by_domain"]:
            shown = page.text.get(f"{run}-a{a}-domain-{row['label']}-calls", "").strip()
            expect(f"{run} {agent['agent']} {row['label']} avg calls", shown, f"{row['mean_calls']:.1f}")
        recovery = agent["recovery"]
        if recovery["injected"] or recovery["encountered"]:
            shown = page.text.get(f"{run}-a{a}-recovery-rate", "").split(" ")[0]
            expect(f"{run} {agent['agent']} recovery rate", shown, pct(recovery["recovery_rate"]["value"]))
        for row in agent["ablation"]:
            shown = page.text.get(f"{run}-a{a}-ablation-{row['fault_profile']}", "").strip()
            expect(f"{run} {agent['agent']} ablation {row['fault_profile']}", shown, pct(row["pass"]["rate"]["value"], 2))

summaries = [json.load(open(f"{out}/run-000{i}.json")) for i in (1, 2)]
report = dom("report")
check_run(report, "r0", summaries[0])
expect("report sections", report.sections,
       ["overview", "surface", "pass-k", "domains", "recovery", "validity"])
agents = len(summaries[0]["report"]["agents"])
expect("report figures (per agent: two heat maps, a pass^k curve, domain and recovery bars)", report.svgs, 5 * agents)
expect("report SVG text rendered", report.svg_texts > 100, True)

compare = dom("compare")
check_run(compare, "r0", summaries[0])
check_run(compare, "r1", summaries[1])
expect("compare sections", compare.sections,
       ["overview", "comparison", "surface", "pass-k", "domains", "recovery", "ablation", "validity"])
base = {a["agent"]: a for a in summaries[0]["report"]["agents"]}
for a, agent in enumerate(summaries[1]["report"]["agents"]):
    if agent["agent"] in base:
        now, before = ratio(agent["overall"]["pass_k"]["value"]), ratio(base[agent["agent"]]["overall"]["pass_k"]["value"])
        expect(f"delta pass^k {agent['agent']}", compare.text.get(f"r1-a{a}-delta-pass_k", "").strip(), f"{(now - before) * 100:+.2f} pp")

png_is_a_picture(f"{out}/report.png", 100)
png_is_a_picture(f"{out}/compare.png", 100)
if failures:
    sys.exit(f"{len(failures)} check(s) failed: {', '.join(failures)}")
print(f"browser check: the reports rendered as expected; screenshots in {out}/report.png and {out}/compare.png")
PY
