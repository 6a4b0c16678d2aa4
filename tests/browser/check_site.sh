#!/usr/bin/env bash
# Renders the static results site (`toolenv site`) in Debian's headless
# Chromium (installed if missing) and checks what rendered: a leaderboard per
# suite and generator version, each row's pass^1 and pass^k against `toolenv
# report --json`, the links to every run's page and comparison, and a
# screenshot that is a picture. Artifacts are kept in target/browser-site/.
#
# Usage: tests/browser/check_site.sh   (from anywhere; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/browser-site
rm -rf "$out" && mkdir -p "$out"

# shellcheck source=tests/browser/chromium.sh
source tests/browser/chromium.sh

cargo build --locked --quiet -p toolenv-cli --bin toolenv
toolenv=target/debug/toolenv
store="$out/runs.db"
"$toolenv" run --grid paper --agent solver,brittle --store "$store" >/dev/null                       # run-0001
"$toolenv" run --grid paper --agent reference-no-retry --store "$store" >/dev/null                   # run-0002
"$toolenv" run --suite generated:7:2 --agent solver,brittle --trials 2 --store "$store" >/dev/null   # run-0003
"$toolenv" site --out "$out/site" --store "$store"
for run in run-0001 run-0002 run-0003; do
    "$toolenv" report "$run" --json --store "$store" >"$out/$run.json"
done

window=1400,1400
render "$out/site/index.html" --dump-dom >"$out/index.dom.html"
render "$out/site/index.html" --screenshot="$PWD/$out/index.png" >/dev/null
render "$out/site/runs/run-0003.html" --dump-dom >"$out/run-0003.dom.html"

python3 - "$out" <<'PY'
import json, os, sys
from html.parser import HTMLParser

sys.path.insert(0, "tests/browser")
from checks import expect, failures, png_is_a_picture

out = sys.argv[1]

class Dom(HTMLParser):
    """Leaderboards (suite, version) and their rows: (run, agent) -> {field: rendered text}; the links."""
    def __init__(self):
        super().__init__()
        self.boards, self.links, self.row, self.field, self.text = [], [], None, None, ""
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and "data-suite" in attrs:
            self.boards.append(((attrs["data-suite"], attrs["data-generator-version"]), {}))
        if tag == "tr" and "data-run" in attrs:
            self.row = (attrs["data-run"], attrs["data-agent"])
            self.boards[-1][1][self.row] = {}
        if tag == "td" and self.row and attrs.get("data-field"):
            self.field, self.text = attrs["data-field"], ""
        if tag == "a":
            self.links.append(attrs.get("href"))
    def handle_endtag(self, tag):
        if tag == "td" and self.field:
            self.boards[-1][1][self.row][self.field] = self.text
            self.field = None
        if tag == "tr":
            self.row = None
    def handle_data(self, data):
        if self.field:
            self.text += data


def pct(value):
    return "n/a" if value is None else f"{value['num'] / value['den'] * 100:.1f}%"

dom = Dom()
dom.feed(open(f"{out}/index.dom.html", encoding="utf-8").read())
boards = dict(dom.boards)
expect("leaderboards (suite, generator version)", sorted(boards), [("generated:7:2", "2"), ("paper", "0")])
runs = {"run-0001": ("paper", "0"), "run-0002": ("paper", "0"), "run-0003": ("generated:7:2", "2")}
for run, board in runs.items():
    summary = json.load(open(f"{out}/{run}.json"))
    for agent in summary["report"]["agents"]:
        row = boards[board].get((run, agent["agent"]))
        expect(f"{run} {agent['agent']} is on the {board} leaderboard", row is not None, True)
        for other, rows in boards.items():
            if other != board:
                expect(f"{run} {agent['agent']} not on {other}", (run, agent["agent"]) in rows, False)
        if row:
            for field in ("pass_1", "pass_k"):
                shown = row[field].split("%")[0] + "%" if "%" in row[field] else row[field]
                expect(f"{run} {agent['agent']} {field}", shown, pct(agent["overall"][field]["value"]))
for link in ["runs/run-0001.html", "runs/run-0002.html", "runs/run-0003.html", "compare/run-0002-vs-run-0001.html"]:
    expect(f"link {link}", link in dom.links and os.path.isfile(f"{out}/site/{link}"), True)
page = open(f"{out}/run-0003.dom.html", encoding="utf-8").read()
expect("the run page rendered its report", "toolenv report: run-0003" in page and "<svg" in page, True)

png_is_a_picture(f"{out}/index.png", 50)
if failures:
    sys.exit(f"{len(failures)} check(s) failed: {', '.join(failures)}")
print(f"browser check: the site rendered as expected; screenshot in {out}/index.png")
PY
