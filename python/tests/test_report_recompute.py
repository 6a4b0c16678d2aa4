"""An independent recomputation of every figure `toolenv report` prints (issue #47).

This shares no code with the Rust metrics: it reads a stored run's episodes
through `toolenv export RUN` (JSON lines) and recomputes, from the documented
definitions alone (docs/runs-and-reports.md "The figures, defined",
docs/faults.md, docs/multi-agent.md, docs/comparing-agents.md), every figure
of `toolenv report RUN --json`: pass^1 / pass^k with their Wilson intervals
and MDEs per agent, by ε, by λ, by domain and by fault profile; the ceilings
and infeasible counts; the reliability surface, its volume and R_fault /
R_prompt; the fault ledger per kind and its totals; the ablation against
`mixed`; MAS-FIRE's RS_f, O_f, L_f, S_f; tokens and cost; the conversational
figures (docs/conversations.md: clarification recall and precision, user turns,
pass^k beside the tasks in full) and Table 10 (docs/llm-agents.md: tokens, calls
and the LLM agents' protocol figures per agent, the ratios to the cheapest). It
then checks that every number of the text report appears (as printed, rounded)
in the JSON, and that every `data-ptr` number of the HTML page resolves and
shows its value.

Which conversational task withholds a slot is read from `toolenv tasks show`
(its description says "… I will tell you" in the slot's place), and a variant's
task in full from its id. The LLM agents play against scripted endpoints
(examples/python/scripted_model.py, started on port 0 for the run), whose fixed
usage per reply gives each episode's tokens and, with --price, its cost; the
protocol figures are read from the recorded conversations.

The results site (`toolenv site`) is checked the same way: of each run's store,
and of a store of several runs (leaderboards of several runs, comparisons),
every figure of its index (parsed with html.parser: ranks, pass^1, pass^k and
their intervals, volumes, costs, episodes; n/a where a figure is absent) is
recomputed from the export, and every `data-ptr` of its run and comparison
pages resolves and shows its value.

The runs are randomized grids drawn from a fixed list of seeds, so the test
is deterministic.
"""

import collections
import contextlib
import json
import math
import os
import pathlib
import random
import re
import subprocess
import sys
from fractions import Fraction
from html.parser import HTMLParser

import pytest

CONVERSATIONAL_SEEDS = [22, 23, 24]  # grids of conversational tasks (conversational_grid)
LLM_SEEDS = [25, 26]  # grids with LLM agents through scripted endpoints (llm_grid)
SEEDS = list(range(22)) + CONVERSATIONAL_SEEDS + LLM_SEEDS
Z_975 = 1.959963984540054  # the 97.5 % normal quantile (95 % two-sided)
Z_80 = 0.8416212335729143  # the 80 % normal quantile (80 % power)
# The report's z is 1.959964 (7 significant digits; docs/comparing-agents.md), so what
# depends on it (Wilson bounds, MDEs) agrees with the exact quantile to about 1e-7.
Z_TOLERANCE = 1e-6
# The conversational variants' version and the generator's, which their ids name (docs/conversations.md).
VARIANTS_VERSION, GENERATOR_VERSION = 3, 2
ABLATIONS = {"timeout-only", "rate-limit-only", "partial-response-only", "mixed"}
SINGLE_AGENTS = ["reference", "brittle", "random", "idle", "solver", "reference-no-retry"]
TEAMS = ["team-pipeline", "team-closed-loop"]
MAS_FAULTS = [
    "hallucination",
    "message-cycle",
    "memory-loss",
    "parameter-filling-error",
    "critical-information-loss",
    "message-storm",
    "tool-selection-error",
    "inexecutable-plan",
    "parameter-format-error",
]
DOMAINS = ["travel", "support", "scheduling", "ecommerce"]
# A read of each domain with arguments its schema takes: the steps of a scripted model's play.
READS = {
    "travel": [("get_itinerary", {}), ("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"})],
    "scheduling": [("check_calendar", {"date": "2026-01-05"}), ("check_calendar", {"date": "2026-03-02"})],
    "support": [("list_open_tickets", {}), ("search_knowledge_base", {"query": "refund"})],
    "ecommerce": [("search_products", {}), ("check_inventory", {"sku": "SKU-1003"})],
}
EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
# What examples/python/scripted_model.py reports for every reply: its usage.
SCRIPTED_TOKENS = {"input": 100, "output": 10}


# ---------------------------------------------------------------- the grids


def grid(seed):
    """The `toolenv run` arguments of the run drawn from `seed`, and its trials k."""
    if seed in CONVERSATIONAL_SEEDS:
        return conversational_grid(seed)
    if seed in LLM_SEEDS:
        return llm_grid(seed)[:2]
    r = random.Random(seed)
    args = ["--suite", f"generated:{r.randint(0, 999)}:1", "--seed", str(r.randint(0, 50))]
    if seed % 6 == 5:
        agents = r.sample(TEAMS, r.randint(1, 2))
        trials = r.choice([1, 2])
        args += ["--agent", ",".join(agents), "--mas-faults", ",".join(r.sample(MAS_FAULTS, 2))]
        args += ["--mas-rate", r.choice(["0.3", "0.5"]), "--domain", r.choice(DOMAINS)]
        if seed % 12 == 5:
            args += ["--epsilon", "0,0.2"]
    else:
        agents = r.sample(SINGLE_AGENTS, r.randint(1, 3))
        epsilons = sorted(r.sample(["0", "0.1", "0.2", "0.3"], r.randint(1, 3)), key=float)
        profiles = r.sample(["0.0", "0.1", "0.2", "0.3", "0.3", "timeout-only", "rate-limit-only", "mixed"], r.randint(1, 3))
        if seed % 3 == 0 and "0.3" not in profiles:
            profiles.append("0.3")  # λ = 0.3 makes infeasible episodes
        profiles = list(dict.fromkeys(profiles))
        trials = r.choice([1, 1, 2, 3, 4]) if seed else 1
        seeds = r.choice([1, 1, 1, 2])
        args += ["--agent", ",".join(agents), "--epsilon", ",".join(epsilons), "--faults", ",".join(profiles)]
        args += ["--seeds", str(seeds)]
        size = len(agents) * len(epsilons) * len(profiles) * trials * seeds * 12
        if size > 180 or r.random() < 0.3:
            args += ["--domain", r.choice(DOMAINS)]
    args += ["--trials", str(trials), "--time-scale", "0", "--concurrency", "8"]
    return args, trials


def conversational_grid(seed):
    """A grid of conversational tasks: the solver (which asks the user) and idle (which never does) beside up to two
    other agents, 1 to 3 trials, under faults on the first two seeds, paired with the tasks in full on the last two."""
    r = random.Random(seed)
    i = CONVERSATIONAL_SEEDS.index(seed)
    suite = "conversational-paired" if i else "conversational"
    n = r.randint(2, 4)  # of four origins in a row the first withholds nothing, so n ≥ 2 withholds something
    agents = ["solver", "idle"] + r.sample(["reference", "reference-no-retry", "brittle", "random"], r.randint(0, 2))
    r.shuffle(agents)
    trials = r.randint(1, 3)
    args = ["--suite", f"{suite}:{r.randint(0, 999)}:{n}", "--seed", str(r.randint(0, 50)), "--agent", ",".join(agents)]
    levels = 1
    if i < 2:
        profiles = r.sample(["0.0", "0.1", "0.2", "0.3", "timeout-only"], r.randint(1, 2))
        args += ["--faults", ",".join(profiles)]
        levels *= len(profiles)
    if r.random() < 0.5:
        epsilons = sorted(r.sample(["0", "0.1", "0.2", "0.3"], 2), key=float)
        args += ["--epsilon", ",".join(epsilons)]
        levels *= 2
    size = 12 * n * (2 if i else 1) * len(agents) * trials * levels
    for option, values, parts in (("--domain", DOMAINS, 4), ("--level", ["1", "2", "3"], 3)):
        if size > 200:
            args += [option, r.choice(values)]
            size //= parts
    args += ["--trials", str(trials), "--time-scale", "0", "--concurrency", "8"]
    return args, trials


def llm_grid(seed):
    """A grid with two LLM agents through a scripted endpoint (examples/python/scripted_model.py) beside a built-in
    agent: `react@scripted` priced, `reflexion@cheap` priced on the first seed only, so that a ratio of costs and
    an absent cost both show. The script is one or two reads of one domain. The first seed plays every domain's
    tasks: the other domains' episodes meet a first step their tools do not offer, which the endpoint refuses
    (HTTP 400: an infrastructure error), and the script's last step is malformed (arguments that are no JSON
    object: protocol errors). The second plays conversational tasks paired with the tasks in full: the script asks
    the user first (the tasks in full offer no ask_user: infrastructure errors), and an LLM user answers through an
    endpoint of its own whose script is empty (it answers every question "Done."). Returns the arguments, with
    {agent_url} and {user_url} for the endpoints' base URLs, the trials, and the endpoints' scripts."""
    r = random.Random(seed)
    i = LLM_SEEDS.index(seed)
    domain = r.choice(DOMAINS)
    script = [{"tool": tool, "arguments": arguments} for tool, arguments in r.sample(READS[domain], r.randint(1, 2))]
    trials = r.randint(1, 2)
    profiles = r.sample(["0.0", "0.1", "0.2", "0.3"], r.randint(1, 2))
    args = ["--seed", str(r.randint(0, 50)), "--faults", ",".join(profiles), "--trials", str(trials)]
    args += ["--base-url", "{agent_url}", "--price", "scripted=2.5,10"]
    scripts = {"agent_url": script}
    if i == 0:
        script.append({"tool": script[0]["tool"], "arguments": "not an object"})
        builtin = r.choice(["reference", "brittle", "solver"])
        args += ["--suite", f"generated:{r.randint(0, 999)}:1", "--price", "cheap=0.5,2"]
    else:
        script.insert(0, {"tool": "ask_user", "arguments": {"question": "Which one do you mean?"}})
        builtin = "solver"
        args += ["--suite", f"conversational-paired:{r.randint(0, 999)}:2", "--domain", domain]
        args += ["--user", "llm", "--user-endpoint", "{user_url}", "--user-model", "echo"]
        scripts["user_url"] = []
    args += ["--agent", f"react@scripted,reflexion@cheap,{builtin}", "--time-scale", "0", "--concurrency", "8"]
    return args, trials, scripts


@contextlib.contextmanager
def scripted_models(scripts, scratch):
    """examples/python/scripted_model.py serving each of `scripts` on a port of its own: {name: its base URL}."""
    processes, urls = [], {}
    try:
        for name, script in scripts.items():
            path = scratch / f"script-{len(list(scratch.glob('script-*')))}.json"
            path.write_text(json.dumps(script))
            command = [sys.executable, str(EXAMPLES / "scripted_model.py"), str(path), "--port", "0"]
            processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
            urls[name] = re.search(r"http://\S+/v1", processes[-1].stdout.readline()).group(0)
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


_PLAYED = {}


def toolenv(binary, *args):
    out = subprocess.run(
        [binary, *args], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1", "RUST_LOG": "warn"}, timeout=300
    )
    assert out.returncode == 0, f"toolenv {' '.join(args)} failed:\n{out.stderr}"
    return out.stdout


def played(seed, binary, scratch):
    """Plays the run of `seed` in a store of its own; returns (args, k, episodes, json, text, html)."""
    if seed not in _PLAYED:
        args, k = grid(seed)
        store = str(scratch / f"run-{seed}.db")
        with scripted_models(llm_grid(seed)[2] if seed in LLM_SEEDS else {}, scratch) as urls:
            toolenv(binary, "run", *[a.format(**urls) for a in args], "--store", store)
        episodes = [json.loads(line) for line in toolenv(binary, "export", "run-0001", "--store", store).splitlines() if line]
        report = json.loads(toolenv(binary, "report", "run-0001", "--json", "--store", store))
        text = toolenv(binary, "report", "run-0001", "--store", store)
        page = scratch / f"run-{seed}.html"
        toolenv(binary, "report", "run-0001", "--html", str(page), "--store", store)
        _PLAYED[seed] = (args, k, episodes, report, text, page.read_text())
    return _PLAYED[seed]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("recompute")


# ---------------------------------------------------------------- statistics


def binom(n, k):
    return math.comb(n, k) if 0 <= k <= n else 0


def wilson(p, n):
    """The 95 % Wilson score interval of a proportion p over n units."""
    if n == 0:
        return None
    z2 = Z_975 * Z_975
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = Z_975 * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mde(p, n):
    """The minimum detectable difference (docs/comparing-agents.md): arcsine scale, a drop, else a rise."""
    if n is None or n <= 0 or p is None:
        return None
    h = (Z_975 + Z_80) * math.sqrt(2 / n)
    phi = math.asin(math.sqrt(min(max(p, 0.0), 1.0)))
    if phi - h / 2 >= 0:
        return abs(p - math.sin(phi - h / 2) ** 2)
    if phi + h / 2 <= math.pi / 2:
        return abs(math.sin(phi + h / 2) ** 2 - p)
    return None  # no change that large is possible either way: undefined (n/a)


# ---------------------------------------------------------------- episodes


def level_key(x):
    """ε and λ levels ascending, the episodes without a level (null) last."""
    return (1, 0.0) if x is None else (0, float(x))


def level_label(x):
    if x is None:
        return "no level"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class Episode:
    def __init__(self, line):
        result = line["result"]
        self.raw = line
        self.agent = result["agent"]
        self.task = result["task_id"]
        self.seed = line["planned"]["seed"]
        self.epsilon = result["epsilon"]
        self.lam = result["lambda"]
        self.profile = result["fault_profile"]
        self.domain = result["domain"]
        self.outcome = result["outcome"]
        self.passed = self.outcome == "passed"
        self.infra = self.outcome not in ("passed", "failed")
        self.feasible = result.get("feasible")
        self.calls = result["calls"]
        self.tokens = result.get("tokens")
        self.cost = result.get("cost_usd")
        self.mas = result.get("mas_faults") or []
        self.trajectory = line["trajectory"]  # none for an infrastructure error
        calls = self.trajectory["calls"] if self.trajectory else []
        # Turns with the simulated user, and those an LLM user answered (its answer recorded in the call).
        self.user_turns = sum(call["tool"] == "ask_user" for call in calls)
        self.llm_user_turns = sum("user_answer" in call for call in calls if call["tool"] == "ask_user")
        conversation = self.trajectory and self.trajectory.get("conversation")
        self.llm = llm_counts(conversation) if conversation else None

    @property
    def unit(self):
        """A task under one configuration: pass^k's unit."""
        return (self.agent, self.task, self.seed, self.epsilon, self.profile)


def original(task):
    """The id of the task given in full that a conversational variant's id stands for (docs/conversations.md: the
    variant's id is its task's with `c` and the variants' version for `g` and the generator's), None for any other
    id: `travel/cheapest-flight/c3-1-2026-0001` stands for `travel/cheapest-flight/g2-1-2026-0001`."""
    match = re.fullmatch(r"(.*)/c(\d+)-(\d+-\d+-\d+)", task)
    if not match or int(match.group(2)) != VARIANTS_VERSION:
        return None
    return f"{match.group(1)}/g{GENERATOR_VERSION}-{match.group(3)}"


_WITHHOLDS = {}


def withholds(binary, task):
    """Whether a conversational task withholds a slot: its description as `toolenv tasks show` gives it (ε = 0)
    reads "… I will tell you" in the slot's place (docs/conversations.md)."""
    if task not in _WITHHOLDS:
        description = re.search(r"^description: (.*)$", toolenv(binary, "tasks", "show", task), re.M).group(1)
        _WITHHOLDS[task] = " I will tell you" in description
    return _WITHHOLDS[task]


def llm_counts(conversation):
    """A built-in LLM agent's protocol figures, from its recorded conversation (docs/llm-agents.md): model turns
    (the model's replies), native calls (tool calls whose arguments are a JSON object), calls written as text (a
    reply whose text is one JSON object {"name", "arguments"}), protocol errors (a reply meant as a call that cannot
    be read: a native call whose arguments are no JSON object), and whether it outgrew the model's context."""
    counts = dict(model_turns=0, native_calls=0, text_form_calls=0, protocol_errors=0)
    for message in conversation["messages"]:
        if message["role"] != "assistant":
            continue
        counts["model_turns"] += 1
        calls = message.get("tool_calls") or []
        try:
            readable = all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)
        except json.JSONDecodeError:
            readable = False
        if calls and readable:
            counts["native_calls"] += len(calls)
        elif calls:
            counts["protocol_errors"] += 1
        else:
            try:
                text = json.loads(message.get("content") or "")
            except json.JSONDecodeError:
                text = None
            counts["text_form_calls"] += isinstance(text, dict) and {"name", "arguments"} <= set(text)
    counts["context_exhausted"] = int(conversation["context_exhausted"])
    return counts


def ledger(calls):
    """The fault ledger of a trajectory per kind (docs/faults.md, "The fault ledger")."""
    def reply(call):
        outcome = call["outcome"]
        if "failure" in outcome:
            return "failure"
        if "result" in outcome or "error" in outcome:
            return "answer"
        return "other"

    kinds = {}
    for i, call in enumerate(calls):
        fault = call.get("fault")
        if not fault:
            continue
        c = kinds.setdefault(
            fault["kind"],
            dict(hits=0, injected=0, encountered=0, retried=0, recovered=0, extra_calls=0, answered_after=0),
        )
        c["hits"] += 1
        c["injected"] += bool(fault["new"])
        encountered = reply(call) == "failure"
        c["encountered"] += encountered
        later = [d for d in calls[i + 1 :] if d["tool"] == call["tool"]]
        c["retried"] += bool(later)
        answer = next((j for j, d in enumerate(later) if not d.get("fault") and reply(d) == "answer"), None)
        if answer is not None:
            c["answered_after"] += 1
            if encountered:
                c["recovered"] += 1
                c["extra_calls"] += answer + 1
    return kinds


def pass_k(episodes, k, estimator="pass_hat_k", success=lambda e: e.passed):
    """pass^k (or pass@k) by the unbiased estimator, exactly: (value, tasks, excluded, trials)."""
    units = {}
    for e in episodes:
        n, c = units.get(e.unit, (0, 0))
        units[e.unit] = (n + 1, c + bool(success(e)))
    terms, trials, excluded = [], 0, 0
    for n, c in units.values():
        if n < k:
            excluded += 1
            continue
        trials += n
        if estimator == "pass_hat_k":
            terms.append(Fraction(binom(c, k), binom(n, k)))
        else:
            terms.append(1 - Fraction(binom(n - c, k), binom(n, k)))
    value = sum(terms, Fraction(0)) / len(terms) if terms else None
    return value, len(terms), excluded, trials


# ---------------------------------------------------------------- comparison


class Checker:
    def __init__(self, seed):
        self.seed = seed
        self.problems = []
        self.checked = 0

    def eq(self, where, mine, theirs, tolerance=1e-9):
        """`tolerance` for floats: 1e-9, or Z_TOLERANCE for what depends on z (intervals, MDEs)."""
        self.checked += 1
        if isinstance(mine, tuple) and isinstance(theirs, tuple) and len(mine) == len(theirs):
            for i, (a, b) in enumerate(zip(mine, theirs)):
                self.eq(f"{where}[{i}]", a, b, tolerance)
            self.checked -= 1
            return
        if isinstance(mine, float) or isinstance(theirs, float):
            same = (mine is None and theirs is None) or (
                mine is not None and theirs is not None and abs(float(mine) - float(theirs)) <= tolerance * max(1.0, abs(float(mine)))
            )
        else:
            same = mine == theirs
        if not same:
            self.problems.append(f"seed {self.seed} {where}: recomputed {mine!r}, report {theirs!r}")

    def ratio(self, where, mine, theirs):
        """An exact {num, den} of the report against a Fraction (or None)."""
        got = None if theirs is None else Fraction(theirs["num"], theirs["den"])
        self.eq(where, mine, got)

    def rate(self, where, episodes, k, theirs, success=lambda e: e.passed, estimator="pass_hat_k"):
        value, tasks, excluded, trials = pass_k(episodes, k, estimator, success)
        self.ratio(where + "/value", value, theirs["value"])
        self.eq(where + "/k", k, theirs["k"])
        self.eq(where + "/tasks", tasks, theirs["tasks"])
        self.eq(where + "/tasks_excluded", excluded, theirs["tasks_excluded"])
        self.eq(where + "/trials", trials, theirs["trials"])
        self.eq(where + "/infra_errors", sum(e.infra for e in episodes), theirs["infra_errors"])
        self.eq(where + "/convention", "count_as_failure", theirs["convention"])
        self.eq(where + "/estimator", estimator, theirs["estimator"])
        interval = wilson(float(value), tasks) if value is not None else None
        got = theirs["ci"] and (theirs["ci"]["lower"], theirs["ci"]["upper"])
        if interval is None or got is None:
            self.eq(where + "/ci", interval, got)
        else:
            self.eq(where + "/ci/lower", interval[0], got[0], Z_TOLERANCE)
            self.eq(where + "/ci/upper", interval[1], got[1], Z_TOLERANCE)
        # The MDE: over the tasks for k ≥ 2; pass^1 over its effective units (ICC-discounted trials).
        units = tasks if k >= 2 else theirs["effective_units"]
        if k >= 2:
            self.eq(where + "/effective_units", float(tasks) if tasks else None, theirs["effective_units"])
        elif units is not None:
            self.checked += 1
            if not (min(tasks, trials) - 1e-9 <= units <= max(tasks, trials) + 1e-9 or theirs["value"] in (None,)):
                self.problems.append(f"seed {self.seed} {where}/effective_units {units} outside [{tasks}, {trials}]")
        self.eq(where + "/mde", mde(float(value), units) if value is not None and units else None, theirs["mde"], Z_TOLERANCE)

    def plain_rate(self, where, successes, total, theirs):
        """A Rate {value, successes, total, ci, mde} of a plain proportion."""
        value = successes / total if total else None
        self.eq(where + "/successes", successes, theirs["successes"])
        self.eq(where + "/total", total, theirs["total"])
        self.eq(where + "/value", value, theirs["value"])
        interval = wilson(value, total) if total else None
        got = theirs["ci"] and (theirs["ci"]["lower"], theirs["ci"]["upper"])
        self.eq(where + "/ci", interval, got, Z_TOLERANCE)
        self.eq(where + "/mde", mde(value, total) if total else None, theirs["mde"], Z_TOLERANCE)


def check_row(ch, where, episodes, k, row, label, level=None):
    ch.eq(where + "/label", label, row["label"])
    ch.eq(where + "/level", level, row["level"])
    ch.eq(where + "/episodes", len(episodes), row["episodes"])
    ch.eq(where + "/mean_calls", sum(e.calls for e in episodes) / len(episodes) if episodes else None, row["mean_calls"])
    ch.eq(where + "/infeasible", sum(e.feasible is False for e in episodes), row["infeasible"])
    ch.rate(where + "/pass_1", episodes, 1, row["pass_1"])
    ch.rate(where + "/pass_k", episodes, k, row["pass_k"])
    known = any(e.feasible is not None for e in episodes)
    for name, j in (("ceiling_1", 1), ("ceiling_k", k)):
        if not known:
            ch.eq(where + "/" + name, None, row[name])
        else:
            # The ideal agent passes exactly the feasible episodes (same trials, same convention): an infrastructure
            # error, which no verdict calls feasible, is a failed trial of the ideal agent too.
            ideal = lambda e: e.feasible is not False and not e.infra  # noqa: E731
            ch.rate(where + "/" + name, episodes, j, row[name], success=ideal)


def groups(episodes, key, sort_key=lambda g: g):
    out = {}
    for e in episodes:
        out.setdefault(key(e), []).append(e)
    return sorted(out.items(), key=lambda item: sort_key(item[0]))


def check_breakdown(ch, where, episodes, k, rows, key, numeric):
    if numeric:
        expected = groups(episodes, key, level_key)
    else:
        expected = groups(episodes, key, lambda g: g.encode())
    ch.eq(where + " (rows)", [level_label(g) if numeric else g for g, _ in expected], [r["label"] for r in rows])
    for i, ((group, members), row) in enumerate(zip(expected, rows)):
        label = level_label(group) if numeric else group
        level = (float(group) if group is not None else None) if numeric else None
        check_row(ch, f"{where}/{i}", members, k, row, label, level)


def surface_points(episodes, ks):
    main = [e for e in episodes if e.profile not in ABLATIONS and not e.profile.startswith("mas:") and e.lam is not None]
    cells = groups(main, lambda e: (e.epsilon, e.lam))
    points = []
    for j in sorted(set(ks)):
        for (eps, lam), members in cells:
            points.append(((j, eps, lam), members))
    return points, sorted({c[0] for c, _ in cells}), sorted({c[1] for c, _ in cells})


def trapezoid(levels):
    if len(levels) == 1:
        return [1.0]
    span = levels[-1] - levels[0]
    out = []
    for i in range(len(levels)):
        lo = levels[max(i - 1, 0)]
        hi = levels[min(i + 1, len(levels) - 1)]
        out.append((hi - lo) / 2 / span)
    return out


def surface_volume(values, epsilons, lambdas, k):
    """The volume of R(j, ε, λ): normalized trapezoid over the measured k, ε, λ; only with more than one (ε, λ) cell."""
    volume = None
    ks = sorted({1, k})
    if len(epsilons) * len(lambdas) > 1 and values and all(v is not None for v in values.values()):
        weights = {}
        for j, wk in zip(ks, trapezoid(ks)):
            for eps, we in zip(epsilons, trapezoid(epsilons)):
                for lam, wl in zip(lambdas, trapezoid(lambdas)):
                    weights[(j, eps, lam)] = wk * we * wl
        if set(weights) == set(values):
            volume = {
                "trapezoid": sum(weights[p] * float(values[p]) for p in weights),
                "grid_mean": sum(float(v) for v in values.values()) / len(values),
                "points": len(values),
            }
    return volume


def check_surface(ch, where, episodes, k, agent):
    points, epsilons, lambdas = surface_points(episodes, [1, k])
    theirs = agent["surface"]["points"]
    ch.eq(where + "/surface (points)", [p for p, _ in points], [(p["point"]["k"], p["point"]["epsilon"], p["point"]["lambda"]) for p in theirs])
    values = {}
    for i, ((point, members), row) in enumerate(zip(points, theirs)):
        ch.rate(f"{where}/surface/points/{i}/pass", members, point[0], row["pass"])
        values[point] = pass_k(members, point[0])[0]
    volume = surface_volume(values, epsilons, lambdas, k)
    got = agent["surface_volume"]
    if volume is None or got is None:
        ch.eq(where + "/surface_volume", volume, got)
    else:
        for name in ("trapezoid", "grid_mean", "points"):
            ch.eq(f"{where}/surface_volume/{name}", volume[name], got[name])
    # R_fault(λ) = R(k, 0, λ) / R(k, 0, 0); R_prompt(ε) = R(k, ε, 0) / R(k, 0, 0).
    relative = agent["relative"]
    ch.eq(where + "/relative/k", k, relative["k"])
    baseline = values.get((k, 0.0, 0.0))
    ch.ratio(where + "/relative/baseline", baseline, relative["baseline"])
    for axis, measured in (("fault", [(k, 0.0, lam) for lam in lambdas]), ("prompt", [(k, eps, 0.0) for eps in epsilons])):
        measured = [p for p in measured if p in values]
        rows = relative[axis]
        ch.eq(f"{where}/relative/{axis} (levels)", [p[2] if axis == "fault" else p[1] for p in measured], [r["level"] for r in rows])
        for i, (p, row) in enumerate(zip(measured, rows)):
            r = values[p]
            ratio = r / baseline if r is not None and baseline else None
            ch.ratio(f"{where}/relative/{axis}/{i}/r", r, row["r"])
            ch.ratio(f"{where}/relative/{axis}/{i}/ratio", ratio, row["ratio"])


def check_recovery(ch, where, episodes, recovery):
    totals = dict(hits=0, injected=0, encountered=0, retried=0, recovered=0, extra_calls=0, answered_after=0)
    by_kind = {}
    for e in episodes:
        mine = ledger(e.trajectory["calls"] if e.trajectory else [])
        # The episode's own record agrees with its trajectory, kind by kind and in its totals.
        ch.eq(f"{where} episode {e.raw['plan_index']} faults_by_kind", mine, e.raw["result"]["faults_by_kind"])
        stats = {n: sum(c[n] for c in mine.values()) for n in ("injected", "encountered", "recovered", "extra_calls")}
        ch.eq(f"{where} episode {e.raw['plan_index']} fault_stats", stats, e.raw["result"]["fault_stats"])
        if e.trajectory:
            ch.eq(f"{where} episode {e.raw['plan_index']} verdict fault_stats", stats, e.trajectory["verdict"]["fault_stats"])
        for kind, counts in mine.items():
            into = by_kind.setdefault(kind, dict.fromkeys(totals, 0))
            for name, n in counts.items():
                into[name] += n
                totals[name] += n
    ch.eq(where + "/recovery/by_kind", by_kind, recovery["by_kind"])
    for name in ("hits", "injected", "encountered", "retried", "recovered", "extra_calls"):
        ch.eq(f"{where}/recovery/{name}", totals[name], recovery[name])
        ch.eq(f"{where}/recovery/{name} = Σ kinds", sum(c[name] for c in recovery["by_kind"].values()), recovery[name])
    for kind, c in recovery["by_kind"].items():
        ch.checked += 1
        if not (c["recovered"] <= c["encountered"] <= c["hits"] and c["injected"] <= c["hits"]):
            ch.problems.append(f"seed {ch.seed} {where}/recovery/by_kind/{kind}: recovered ≤ encountered ≤ hits broken: {c}")
    ch.eq(where + "/recovery/episodes", len(episodes), recovery["episodes"])
    ch.eq(where + "/recovery/infra_errors", sum(e.infra for e in episodes), recovery["infra_errors"])
    enc, rec, extra = totals["encountered"], totals["recovered"], totals["extra_calls"]
    ch.plain_rate(where + "/recovery/recovery_rate", rec, enc, recovery["recovery_rate"])
    ch.eq(where + "/recovery/extra_calls_per_fault", extra / enc if enc else None, recovery["extra_calls_per_fault"])
    ch.eq(where + "/recovery/extra_calls_per_recovery", extra / rec if rec else None, recovery["extra_calls_per_recovery"])


def check_ablation(ch, where, episodes, rows):
    if not any(e.profile == "mixed" for e in episodes):
        ch.eq(where + "/ablation", [], rows)
        return
    pooled = {}
    for profile, members in groups(episodes, lambda e: e.profile, lambda g: g.encode()):
        pooled[profile] = (sum(e.passed for e in members), len(members))
    ch.eq(where + "/ablation (profiles)", list(pooled), [r["fault_profile"] for r in rows])
    base = pooled["mixed"][0] / pooled["mixed"][1]
    for i, (profile, (passed, n)) in enumerate(pooled.items()):
        row = rows[i]
        ch.eq(f"{where}/ablation/{i}/pass/rate/successes", passed, row["pass"]["rate"]["successes"])
        ch.eq(f"{where}/ablation/{i}/pass/rate/total", n, row["pass"]["rate"]["total"])
        ch.eq(f"{where}/ablation/{i}/pass/rate/value", passed / n, row["pass"]["rate"]["value"])
        ch.eq(f"{where}/ablation/{i}/vs_baseline", None if profile == "mixed" else passed / n - base, row["vs_baseline"])


def check_usage(ch, where, episodes, usage):
    with_tokens = [e for e in episodes if e.tokens is not None]
    with_cost = [e for e in episodes if e.cost is not None]
    ch.eq(where + "/usage/episodes", len(episodes), usage["episodes"])
    ch.eq(where + "/usage/episodes_with_tokens", len(with_tokens), usage["episodes_with_tokens"])
    ch.eq(where + "/usage/episodes_with_cost", len(with_cost), usage["episodes_with_cost"])
    tokens = lambda side: sum(e.tokens[side] for e in with_tokens) if with_tokens else None  # noqa: E731
    ch.eq(where + "/usage/input_tokens", tokens("input"), usage["input_tokens"])
    ch.eq(where + "/usage/output_tokens", tokens("output"), usage["output_tokens"])
    cost = sum(e.cost for e in with_cost) if with_cost else None
    ch.eq(where + "/usage/cost_usd", cost, usage["cost_usd"])
    per_100 = cost / len(with_cost) * 100 if with_cost else None
    ch.eq(where + "/usage/cost_per_100_episodes_usd", per_100, usage["cost_per_100_episodes_usd"])


def check_mas(ch, where, episodes, mas):
    if not any(e.profile.startswith("mas:") for e in episodes):
        ch.eq(where + "/mas_fire", None, mas)
        return
    ch.eq(where + "/mas_fire/baseline_profile", "0.0", mas["baseline_profile"])
    ch.eq(where + "/mas_fire/baseline_tasks", len({e.task for e in episodes if e.profile == "0.0"}), mas["baseline_tasks"])
    # RS_f: T_base = tasks (per ε) all of whose trials under 0.0 passed; each run under f counts c/n.
    base = {}
    for e in episodes:
        if e.profile == "0.0":
            n, c = base.get((e.task, e.epsilon), (0, 0))
            base[(e.task, e.epsilon)] = (n + 1, c + e.passed)
    t_base = {t for t, (n, c) in base.items() if n and c == n}
    profiles = groups([e for e in episodes if e.profile.startswith("mas:")], lambda e: e.profile, lambda g: g.encode())
    ch.eq(where + "/mas_fire/robustness (profiles)", [p for p, _ in profiles], [r["fault_profile"] for r in mas["robustness"]])
    for i, ((profile, members), row) in enumerate(zip(profiles, mas["robustness"])):
        runs = {}
        for e in members:
            if (e.task, e.epsilon) in t_base:
                n, c = runs.get((e.task, e.epsilon), (0, 0))
                runs[(e.task, e.epsilon)] = (n + 1, c + e.passed)
        solved = sum((Fraction(c, n) for n, c in runs.values()), Fraction(0))
        p = f"{where}/mas_fire/robustness/{i}"
        ch.eq(p + "/base_tasks", len(t_base), row["base_tasks"])
        ch.eq(p + "/tasks", len(runs), row["tasks"])
        ch.ratio(p + "/solved", solved, row["solved"])
        ch.ratio(p + "/score", solved / len(runs) if runs else None, row["score"])
        ci = wilson(float(solved / len(runs)), len(runs)) if runs else None
        ch.eq(p + "/ci", ci, row["ci"] and (row["ci"]["lower"], row["ci"]["upper"]), Z_TOLERANCE)
        ch.eq(p + "/infra_errors", sum(e.infra for e in members), row["infra_errors"])
    # O_f, L_f, S_f per (group, fault): an episode counts once per fault type that took effect in it.
    for table, group_of in (("by_agent", lambda e, o: e.agent), ("by_role", lambda e, o: o.get("role") or "-")):
        counts = {}
        for e in episodes:
            seen = {}
            for o in e.mas:
                key = (group_of(e, o), o["fault"])
                detected, fixed = seen.get(key, (False, True))
                seen[key] = (detected or o["detected"], fixed and o["fixed"])
            for key, (detected, fixed) in seen.items():
                c = counts.setdefault(key, [0, 0, 0, 0])
                c[0] += 1
                c[1] += detected
                c[2] += detected and fixed
                c[3] += detected and e.passed
        expected = sorted(counts.items(), key=lambda item: item[0][0].encode())
        rows = mas[table]
        got_keys = [(r["group"], r["fault"]) for r in rows]
        ch.eq(f"{where}/mas_fire/{table} (rows)", sorted(k for k, _ in expected), sorted(got_keys))
        for key, (n, triggered, fixed, success) in expected:
            if key not in got_keys:
                continue
            i = got_keys.index(key)
            row, p = rows[i], f"{where}/mas_fire/{table}/{i}"
            ch.eq(p + "/injected_episodes", n, row["injected_episodes"])
            ch.eq(p + "/triggered", triggered, row["triggered"])
            ch.eq(p + "/fixed", fixed, row["fixed"])
            ch.eq(p + "/final_success", success, row["final_success"])
            ch.plain_rate(p + "/occurrence", triggered, n, row["occurrence"])
            ch.plain_rate(p + "/local_success", fixed, triggered, row["local_success"])
            ch.plain_rate(p + "/success", success, triggered, row["success"])


def check_conversation(ch, where, episodes, k, theirs, withholds):
    """The conversational figures (docs/conversations.md, "Figures"), over an agent's episodes of conversational
    tasks: recall = episodes that asked (an ask_user call) over those whose task withholds a slot, precision =
    episodes that did not ask over those whose task withholds nothing, user turns (ask_user calls) per episode and
    those an LLM user answered, each over the episodes played (an infrastructure error played nothing); pass^k of
    the conversational tasks, and of the same tasks given in full over the run's episodes of them (null without)."""
    mine = [e for e in episodes if original(e.task)]
    if not mine or theirs is None:
        ch.eq(where + "/conversation", bool(mine), theirs is not None)
        return
    p = where + "/conversation"
    played = [e for e in mine if not e.infra]
    withheld = [e for e in played if withholds(e.task)]
    full = [e for e in played if not withholds(e.task)]
    for e in played:
        if e.epsilon == 0:  # the description the agent read is the task's own
            ch.eq(f"{p} episode {e.raw['plan_index']} withholds", withholds(e.task), " I will tell you" in e.trajectory["description"])
    ch.eq(p + "/episodes", len(mine), theirs["episodes"])
    ch.plain_rate(p + "/recall", sum(e.user_turns > 0 for e in withheld), len(withheld), theirs["recall"])
    ch.plain_rate(p + "/precision", sum(e.user_turns == 0 for e in full), len(full), theirs["precision"])
    turns = sum(e.user_turns for e in played)
    ch.eq(p + "/user_turns_per_episode", turns / len(played) if played else 0.0, theirs["user_turns_per_episode"])
    ch.eq(p + "/llm_user_turns", sum(e.llm_user_turns for e in played), theirs["llm_user_turns"])
    ch.rate(p + "/pass_k", mine, k, theirs["pass_k"])
    originals = {original(e.task) for e in mine}
    in_full = [e for e in episodes if e.task in originals]
    if in_full and theirs["pass_k_in_full"]:
        ch.rate(p + "/pass_k_in_full", in_full, k, theirs["pass_k_in_full"])
    else:
        ch.eq(p + "/pass_k_in_full", bool(in_full), theirs["pass_k_in_full"] is not None)


LLM_COUNTS = ["model_turns", "native_calls", "text_form_calls", "protocol_errors", "context_exhausted"]


def check_cost(ch, episodes, rows):
    """Table 10 (docs/llm-agents.md, "Tokens and cost"; `report --json`'s `cost`): a row per agent that reported
    tokens or a cost or played as a built-in LLM agent, in byte order: its episodes and usage, tokens per episode
    (over the episodes with tokens), tool calls per episode (over the episodes played), the LLM protocol figures
    summed over its episodes with a model conversation, and the ratios of its tokens per episode and cost per 100
    episodes to the least (above 0) of any row's."""
    agents = groups(episodes, lambda e: e.agent, lambda g: g.encode())
    expected = [(a, m) for a, m in agents if any(e.tokens is not None or e.cost is not None or e.llm for e in m)]
    ch.eq("/report/cost (agents)", [a for a, _ in expected], [r["agent"] for r in rows])
    figures = []
    for i, ((agent, mine), row) in enumerate(zip(expected, rows)):
        where = f"/report/cost/{i}"
        ch.eq(where + "/episodes", len(mine), row["episodes"])
        check_usage(ch, where, mine, row["usage"])
        with_tokens = [e for e in mine if e.tokens is not None]
        tokens = sum(e.tokens["input"] + e.tokens["output"] for e in with_tokens) / len(with_tokens) if with_tokens else None
        played = [e for e in mine if not e.infra]
        with_cost = [e for e in mine if e.cost is not None]
        cost = sum(e.cost for e in with_cost) / len(with_cost) * 100 if with_cost else None
        ch.eq(where + "/tokens_per_episode", tokens, row["tokens_per_episode"])
        ch.eq(where + "/calls_per_episode", sum(e.calls for e in played) / len(played) if played else None, row["calls_per_episode"])
        conversations = [e for e in mine if e.llm]
        ch.eq(where + "/llm_episodes", len(conversations), row["llm_episodes"])
        turns = sum(e.llm["model_turns"] for e in conversations) / len(conversations) if conversations else None
        ch.eq(where + "/turns_per_episode", turns, row["turns_per_episode"])
        for name in LLM_COUNTS:
            ch.eq(f"{where}/llm/{name}", sum(e.llm[name] for e in conversations), row["llm"][name])
        figures.append((tokens, cost))
    least = [min((f[j] for f in figures if f[j]), default=None) for j in (0, 1)]
    for i, (figure, row) in enumerate(zip(figures, rows)):
        for j, name in enumerate(("tokens_ratio", "cost_ratio")):
            ratio = figure[j] / least[j] if figure[j] is not None and least[j] else None
            ch.eq(f"/report/cost/{i}/{name}", ratio, row[name])


def check_scripted_usage(ch, args, episodes):
    """The tokens and cost of an LLM agent's episodes against the scripted endpoint: its usage for each reply
    (SCRIPTED_TOKENS), priced by the run's --price MODEL=IN,OUT (US dollars per million input and output tokens);
    no cost for a model without a price."""
    prices = dict(args[i + 1].split("=") for i, a in enumerate(args) if a == "--price")
    for e in episodes:
        if not e.llm:
            continue
        at = f"episode {e.raw['plan_index']}"
        tokens = {side: n * e.llm["model_turns"] for side, n in SCRIPTED_TOKENS.items()}
        ch.eq(at + " tokens", tokens, e.tokens)
        price = prices.get(e.agent.split("@", 1)[1])
        rates = price and [float(x) for x in price.split(",")]
        ch.eq(at + " cost", rates and (tokens["input"] * rates[0] + tokens["output"] * rates[1]) / 1e6, e.cost)
        usage = e.trajectory["usage"]
        trajectory = (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"])
        ch.eq(at + " trajectory usage", (tokens["input"], tokens["output"], e.cost), trajectory)


def fraction_json(value):
    return None if value is None else {"num": value.numerator, "den": value.denominator}


def curves(episodes, k):
    """The HTML page's pass^j curves (j = 1..k), recomputed: overall and per main-grid cell, per agent."""
    out = []
    for agent, mine in groups(episodes, lambda e: e.agent, lambda g: g.encode()):
        cells, _, _ = surface_points(mine, range(1, k + 1))
        out.append(
            {
                "agent": agent,
                "overall": [{"value": fraction_json(pass_k(mine, j)[0])} for j in range(1, k + 1)],
                "cells": {
                    "points": [
                        {"point": {"k": j, "epsilon": eps, "lambda": lam}, "pass": {"value": fraction_json(pass_k(members, j)[0])}}
                        for (j, eps, lam), members in cells
                    ]
                },
            }
        )
    return out


def recompute(seed, k, lines, document, ch, binary):
    episodes = [Episode(line) for line in lines]
    for e in episodes:
        at = f"episode {e.raw['plan_index']}"
        if e.trajectory is None:  # an infrastructure error: nothing played, nothing judged
            ch.eq(at + " outcome", True, e.infra)
            ch.eq(at + " calls", 0, e.calls)
            continue
        ch.eq(at + " outcome", e.trajectory["verdict"]["passed"], e.passed)
        ch.eq(at + " calls", len([c for c in e.trajectory["calls"]]), e.calls)
        # The episode's record of its user turns and of its model conversation agrees with its trajectory.
        result = e.raw["result"]
        ch.eq(at + " user_turns", e.user_turns, result.get("user_turns", 0))
        ch.eq(at + " llm_user_turns", e.llm_user_turns, result.get("llm_user_turns", 0))
        ch.eq(at + " llm", e.llm, result.get("llm"))
    report = document["report"]
    ch.eq("/report/k", k, report["k"])
    counts = report["counts"]
    ch.eq("/report/counts/recorded", len(episodes), counts["recorded"])
    ch.eq("/report/counts/passed", sum(e.passed for e in episodes), counts["passed"])
    ch.eq("/report/counts/failed", sum(e.outcome == "failed" for e in episodes), counts["failed"])
    ch.eq("/report/counts/infra_errors", sum(e.infra for e in episodes), counts["infra_errors"])
    ch.eq("/report/counts/infeasible", sum(e.feasible is False for e in episodes), counts["infeasible"])
    ch.eq("/report/counts/planned", counts["recorded"] + counts["not_recorded"], counts["planned"])
    agents = groups(episodes, lambda e: e.agent, lambda g: g.encode())
    ch.eq("/report/agents (names)", [a for a, _ in agents], [a["agent"] for a in report["agents"]])
    for i, ((name, mine), agent) in enumerate(zip(agents, report["agents"])):
        where = f"/report/agents/{i}"
        check_row(ch, where + "/overall", mine, k, agent["overall"], name)
        check_breakdown(ch, where + "/by_epsilon", mine, k, agent["by_epsilon"], lambda e: e.epsilon, True)
        check_breakdown(ch, where + "/by_lambda", mine, k, agent["by_lambda"], lambda e: e.lam, True)
        check_breakdown(ch, where + "/by_domain", mine, k, agent["by_domain"], lambda e: e.domain, False)
        check_breakdown(ch, where + "/by_fault_profile", mine, k, agent["by_fault_profile"], lambda e: e.profile, False)
        check_surface(ch, where, mine, k, agent)
        check_recovery(ch, where, mine, agent["recovery"])
        check_ablation(ch, where, mine, agent["ablation"])
        check_usage(ch, where, mine, agent["usage"])
        check_mas(ch, where, mine, agent.get("mas_fire"))
        check_conversation(ch, where, mine, k, agent.get("conversation"), lambda task: withholds(binary, task))
        # Answers an answer judge ruled on, by judge, from the trajectories' rulings (absent when none).
        judges = collections.Counter(e.trajectory["answer_ruling"]["judge"] for e in mine if e.trajectory and e.trajectory.get("answer_ruling"))
        ch.eq(where + "/answer_judges", dict(judges), agent.get("answer_judges", {}))
    check_cost(ch, episodes, report.get("cost", []))
    return episodes


# ---------------------------------------------------------------- the text and the page


def json_numbers(value, out):
    """Every number of a JSON document: plain numbers and exact {num, den} ratios."""
    if isinstance(value, dict):
        if set(value) == {"num", "den"}:
            out.append(value["num"] / value["den"])
        for v in value.values():
            json_numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            json_numbers(v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(float(value))
    return out


# Constants of the text's legend lines, not figures.
LEGEND = re.compile(r"Table \d+|95% Wilson|95% \(two-sided\)|80% power|pass\^\d+|\^\d+/\^\d+|\^\d+\b|k ∈ \{[\d, ]+\}|R\(\d+,|mas:[\w-]+@[\d.]+")
NUMBER = re.compile(r"(?<![\w@:/.\-])[-+±$]?\d+(?:\.\d+)?(?![\w@])")


def check_text(ch, text, report):
    """The report's part of the text: its first line (the run's counts) and from the summary line up to the
    failure attribution, which `report --json` does not hold (nor the command line on the second line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\d+ episodes, pass\^", line))
    end = next((i for i, line in enumerate(lines) if line.startswith("Failure attribution")), len(lines))
    text = "\n".join(lines[:1] + lines[start:end])
    ch.eq("text: the report's lines", end - start > 2, True)
    values = json_numbers(report, [])
    # Table 10's calls of all forms (the denominator of "text calls") are not in the JSON: derived from its numbers.
    for row in report["report"].get("cost", []):
        if row["llm_episodes"]:
            values.append(row["llm"]["native_calls"] + row["llm"]["text_form_calls"])
    candidates = sorted({round(v * s, 9) for v in values for s in (1, 100)})
    import bisect

    for line in text.splitlines():
        for token in NUMBER.findall(LEGEND.sub(" ", line)):
            number = token.lstrip("+±$")
            decimals = len(number.split(".")[1]) if "." in number else 0
            x = float(number) * (-1 if token.startswith("-") else 1)
            tolerance = 0.5 * 10**-decimals + 1e-9
            i = bisect.bisect_left(candidates, x - tolerance)
            ch.checked += 1
            if not (i < len(candidates) and candidates[i] <= x + tolerance):
                ch.problems.append(f"seed {ch.seed} text: {token!r} in {line.strip()!r} is no number of report --json")


def pointer(document, ptr):
    node = document
    for part in ptr.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return KeyError
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return KeyError
    return node


def check_page(ch, page, documents, recomputed_curves, name="page"):
    """Every data-ptr of the page resolves, in {"runs": [{report: report --json's, curves}, …]}, to what it shows:
    the page of one run, or of several side by side (`documents` and their curves in the page's order)."""
    figures = {
        "runs": [
            {"run": document["run"]["id"], "report": document["report"], "curves": mine}
            for document, mine in zip(documents, recomputed_curves)
        ]
    }
    runs = range(len(documents))
    tags = re.findall(r'data-ptr="([^"]*)"([^>]*)>([^<]*)<', page)
    ch.eq(f"{name}: data-ptr numbers", bool(tags), True)
    for ptr, attrs, shown in tags:
        if not any(ptr.startswith(f"/runs/{i}/report/") or ptr.startswith(f"/runs/{i}/curves/") for i in runs):
            ch.problems.append(f"seed {ch.seed} {name}: {ptr} points outside the runs' reports")
            continue
        target = pointer(figures, ptr)
        ch.checked += 1
        if target is KeyError:
            ch.problems.append(f"seed {ch.seed} {name}: {ptr} does not resolve")
            continue
        # A difference (data-minus: the figure minus another run's) is n/a when either side is.
        minus = re.search(r'data-minus="([^"]*)"', attrs)
        other = pointer(figures, minus.group(1)) if minus else 0
        if other is KeyError:
            ch.problems.append(f"seed {ch.seed} {name}: {minus.group(1)} (data-minus of {ptr}) does not resolve")
            continue
        if shown.strip() in ("n/a", "-"):
            if target is not None and other is not None:
                ch.problems.append(f"seed {ch.seed} {name}: {ptr} shows {shown!r}, the JSON {target!r}")
            continue
        value = target["num"] / target["den"] if isinstance(target, dict) else target
        if not isinstance(value, (int, float)) or other is None:
            ch.problems.append(f"seed {ch.seed} {name}: {ptr} shows {shown!r}, the JSON {target!r} (minus {other!r})")
            continue
        value -= other["num"] / other["den"] if isinstance(other, dict) else other
        scale = float(re.search(r'data-scale="([^"]*)"', attrs).group(1)) if "data-scale" in attrs else 1.0
        digits = re.search(r"-?\d+(?:\.\d+)?", shown.replace("−", "-"))
        if not digits:
            ch.problems.append(f"seed {ch.seed} {name}: {ptr} shows no number: {shown!r}")
            continue
        decimals = len(digits.group(0).split(".")[1]) if "." in digits.group(0) else 0
        if abs(float(digits.group(0)) - value * scale) > 0.5 * 10**-decimals + 1e-9:
            ch.problems.append(f"seed {ch.seed} {name}: {ptr} shows {shown!r}, the JSON {value!r}")


# ---------------------------------------------------------------- the results site


class SiteIndex(HTMLParser):
    """A results site's index.html as printed: its header line, each leaderboard (attributes, heading, rows of
    cells, comparison links), every link, and any text with a digit outside those (a figure nothing checks)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.about, self.boards, self.links, self.stray = "", [], [], []
        self.open = []  # the open elements, innermost last: (tag, attrs)

    def inside(self, tag, **attrs):
        return any(t == tag and all(a.get(k) == v for k, v in attrs.items()) for t, a in self.open)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.open.append((tag, attrs))
        if tag == "section":
            self.boards.append({"attrs": attrs, "heading": "", "rows": [], "comparisons": []})
        elif tag == "tr" and "data-run" in attrs:
            self.boards[-1]["rows"].append({"attrs": attrs, "cells": []})
        elif tag == "td" and self.inside("tr"):
            self.boards[-1]["rows"][-1]["cells"].append({"attrs": attrs, "text": "", "ci": None, "href": None})
        elif tag == "span" and attrs.get("class") == "ci":
            self.boards[-1]["rows"][-1]["cells"][-1]["ci"] = ""
        elif tag == "a":
            self.links.append(attrs.get("href"))
            if self.inside("td"):
                self.boards[-1]["rows"][-1]["cells"][-1]["href"] = attrs.get("href")
            elif self.inside("section"):
                self.boards[-1]["comparisons"].append([attrs.get("href"), ""])

    def handle_startendtag(self, tag, attrs):
        pass  # <meta/>: no text, no figure

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break

    def handle_data(self, data):
        if any(self.inside(tag) for tag in ("style", "title", "h1", "th", "footer")):
            return  # the style sheet, the titles, the columns' names and the legend
        if self.inside("span", **{"class": "ci"}):
            self.boards[-1]["rows"][-1]["cells"][-1]["ci"] += data
        elif self.inside("td"):
            self.boards[-1]["rows"][-1]["cells"][-1]["text"] += data
        elif self.inside("h2"):
            self.boards[-1]["heading"] += data
        elif self.inside("a") and self.inside("section"):
            self.boards[-1]["comparisons"][-1][1] += data
        elif self.inside("header"):
            self.about += data
        elif re.search(r"\d", data):
            self.stray.append(data)


def suite_of(episodes):
    """A run's suite and generator version, from its task ids (`<domain>/<name>/g<version>-<level>-<seed>-<index>`,
    `c…` for a conversational variant, whose version is the variants'): `generated:<seed>:<n>` with n the highest
    index + 1, `conversational:…` of variants alone, `conversational-paired:…` of variants and their tasks in full."""
    parts = {re.fullmatch(r"([gc])(\d+)-\d+-(\d+)-(\d+)", e.task.rsplit("/", 1)[1]).groups() for e in episodes}
    versions = dict(p[:2] for p in parts)
    assert len({p[2] for p in parts}) == 1 and len({p[:2] for p in parts}) == len(versions), f"one suite: {parts}"
    name = {"g": "generated", "c": "conversational"}[min(versions)] + ("-paired" if len(versions) == 2 else "")
    seed = next(iter(parts))[2]
    return f"{name}:{seed}:{max(int(p[3]) for p in parts) + 1}", int(versions[min(versions)])


def standings(run, k, episodes):
    """A run's leaderboard rows, recomputed: per agent its pass^1 and pass^k (value, tasks), surface volume,
    cost per 100 episodes (over the episodes with a cost) and episodes."""
    out = []
    for agent, mine in groups(episodes, lambda e: e.agent, lambda g: g.encode()):
        points, epsilons, lambdas = surface_points(mine, [1, k])
        volume = surface_volume({p: pass_k(members, p[0])[0] for p, members in points}, epsilons, lambdas, k)
        costs = [e.cost for e in mine if e.cost is not None]
        out.append(
            {
                "run": run,
                "agent": agent,
                "k": k,
                "pass_1": pass_k(mine, 1)[:2],
                "pass_k": pass_k(mine, k)[:2],
                "volume": volume and volume["trapezoid"],
                "cost": sum(costs) / len(costs) * 100 if costs else None,
                "episodes": len(mine),
            }
        )
    return out


def check_shown(ch, where, shown, values, pattern, tolerance=1e-9):
    """A printed figure: `n/a` exactly where it is absent (None), else `pattern`'s numbers (its groups) are
    `values` to their printed rounding (plus `tolerance`)."""
    ch.checked += 1
    if values is None:
        if shown != "n/a":
            ch.problems.append(f"seed {ch.seed} {where}: shows {shown!r} where the figure is absent (n/a)")
        return
    values = values if isinstance(values, tuple) else (values,)
    match = re.fullmatch(pattern, shown or "")
    if not match:
        ch.problems.append(f"seed {ch.seed} {where}: shows {shown!r}, expected {pattern} of {values}")
        return
    for digits, value in zip(match.groups(), values):
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if abs(float(digits) - value) > 0.5 * 10**-decimals + tolerance:
            ch.problems.append(f"seed {ch.seed} {where}: shows {shown!r}, recomputed {value!r}")


def check_index(ch, index, runs, pages):
    """The index of a site of `runs` ((id, k, episodes) in the store's order) against their recomputation: the
    leaderboards (one per suite, generator version and k, in that order), their rows ranked by pass^k then
    pass^1 (equal figures, equal rank) with every cell, the links and the comparisons."""
    dom = SiteIndex()
    dom.feed(index)
    dom.close()
    boards = {}
    for run, k, episodes in runs:
        boards.setdefault(suite_of(episodes) + (k,), []).append((run, k, episodes))
    boards = sorted(boards.items(), key=lambda item: (item[0][0].encode(), item[0][1], item[0][2]))
    about = re.match(r"(\d+) (runs?) in (\d+) (leaderboards?)\.", dom.about.strip())
    counted = lambda n, noun: (str(n), noun if n == 1 else noun + "s")  # noqa: E731
    ch.eq("index: header", counted(len(runs), "run") + counted(len(boards), "leaderboard"), about and about.groups())
    if about and re.search(r"\d", LEGEND.sub(" ", dom.about.strip()[about.end() :])):  # pass^1 is a name
        dom.stray.append(dom.about.strip()[about.end() :])
    ch.eq("index: figures outside the leaderboards", [], dom.stray)
    shown = [tuple(b["attrs"].get(a) for a in ("data-suite", "data-generator-version", "data-k")) for b in dom.boards]
    ch.eq("index: leaderboards", [(suite, str(version), str(k)) for (suite, version, k), _ in boards], shown)
    for board, ((suite, version, k), members) in zip(dom.boards, boards):
        where = f"index: {suite} v{version} k{k}"
        ch.eq(where + " heading", f"Suite {suite}, generator version {version}, k = {k}", board["heading"])
        # `toolenv site` without --exclude-infra-errors: errors are failed trials, and the board says so.
        ch.eq(where + " convention", "count_as_failure", board["attrs"].get("data-convention"))
        rows = [row for run, _, episodes in members for row in standings(run, k, episodes)]
        key = lambda r: tuple(Fraction(-1) if r[f][0] is None else r[f][0] for f in ("pass_k", "pass_1"))  # noqa: E731
        rows = sorted(rows, key=key, reverse=True)  # stable: ties keep the runs' order, then the agents'
        shown = [(r["attrs"]["data-run"], r["attrs"]["data-agent"]) for r in board["rows"]]
        ch.eq(where + " rows", [(r["run"], r["agent"]) for r in rows], shown)
        for mine, row in zip(rows, board["rows"]):
            at = f"{where} {mine['run']} {mine['agent']}"
            cells = row["cells"]
            fields = [c["attrs"].get("data-field") for c in cells]
            ch.eq(at + " cells", ["rank", None, None, "k", "pass_1", "pass_k", "volume", "cost", "episodes"], fields)
            if len(cells) != 9:
                continue
            rank = 1 + sum(key(other) > key(mine) for other in rows)
            ch.eq(at + " rank", str(rank), cells[0]["text"])
            ch.eq(at + " agent", mine["agent"], cells[1]["text"])
            ch.eq(at + " run", (mine["run"], f"runs/{mine['run']}.html"), (cells[2]["text"], cells[2]["href"]))
            ch.eq(at + " run page", True, f"runs/{mine['run']}.html" in pages)
            ch.eq(at + " k", str(mine["k"]), cells[3]["text"])
            for cell, field in zip(cells[4:6], ("pass_1", "pass_k")):
                value, tasks = mine[field]
                value = None if value is None else float(value)
                check_shown(ch, f"{at} {field}", cell["text"], None if value is None else value * 100, r"(\d+\.\d)%")
                interval = wilson(value, tasks) if value is not None else None
                ci = interval and (interval[0] * 100, interval[1] * 100)
                check_shown(ch, f"{at} {field} interval", cell["ci"] or "n/a", ci, r"(\d+\.\d)–(\d+\.\d)", Z_TOLERANCE * 100)
                ch.eq(f"{at} {field} data-value", value, data_value(cell))
            check_shown(ch, at + " volume", cells[6]["text"], mine["volume"], r"(\d\.\d{3})")
            check_shown(ch, at + " cost", cells[7]["text"], mine["cost"], r"\$(\d+\.\d\d)")
            for cell, field in ((cells[6], "volume"), (cells[7], "cost")):
                ch.eq(f"{at} {field} data-value", mine[field], data_value(cell))
            ch.eq(at + " episodes", str(mine["episodes"]), cells[8]["text"])
            for cell, field in ((cells[0], "rank"), (cells[3], "k"), (cells[8], "episodes")):
                ch.eq(f"{at} {field} data-value", float(cell["text"]) if cell["text"].isdigit() else None, data_value(cell))
        base = members[0][0]
        comparisons = [[f"compare/{run}-vs-{base}.html", f"{run} vs {base}"] for run, _, _ in members[1:]]
        ch.eq(where + " comparisons", comparisons, board["comparisons"])
    ch.eq("index: links to no page", [], sorted(set(dom.links) - set(pages)))


def data_value(cell):
    """A cell's data-value as a number, None without one."""
    value = cell["attrs"].get("data-value")
    return None if value is None else float(value)


def site_of(binary, store, out):
    """The pages `toolenv site` writes of every run of `store`: {relative path: html}."""
    toolenv(binary, "site", "--out", str(out), "--store", str(store))
    return {p.relative_to(out).as_posix(): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


# Runs played again, into one store, for a site of several: the grids of these seeds with their suite replaced,
# so that runs of one suite share a leaderboard per k (with comparisons, one with an agent of its base), the
# conversational variants of the same suite (another generator version) have a leaderboard of their own, and
# one run is alone on its.
SITE_RUNS = [
    (8, "generated:77:1"),
    (7, "generated:77:1"),
    (11, "generated:77:1"),
    (21, "generated:77:1"),
    (1, "generated:77:1"),
    (4, "conversational:77:1"),
    (3, "generated:78:1"),
]


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("seed", SEEDS)
def test_the_report_is_what_its_definitions_give(seed, binary, scratch):
    args, k, lines, report, text, page = played(seed, binary, scratch)
    ch = Checker(seed)
    episodes = recompute(seed, k, lines, report, ch, binary)
    check_scripted_usage(ch, args, episodes)
    check_text(ch, text, report)
    # The page's pass^j curves are not in report --json: their pointers resolve in the recomputed curves.
    check_page(ch, page, [report], [curves(episodes, k)])
    assert not ch.problems, f"toolenv run {' '.join(args)}\n" + "\n".join(ch.problems[:40])
    assert ch.checked > 100


def test_the_grids_cover_what_the_checker_is_for(binary, scratch):
    """One trial and several, λ = 0.3, ablations, MAS-FIRE teams, infeasible episodes, conversations and Table 10
    are all checked."""
    runs = [played(seed, binary, scratch) for seed in SEEDS]
    assert {k for _, k, *_ in runs} >= {1, 2, 3}
    assert any("0.3" in a[a.index("--faults") + 1].split(",") for a, *_ in runs if "--faults" in a)
    assert any("mixed" in " ".join(a) for a, *_ in runs)
    assert any("--mas-faults" in a for a, *_ in runs)
    assert any(r["report"]["counts"]["infeasible"] > 0 for _, _, _, r, _, _ in runs)
    assert len(runs) >= 20
    reports = [r["report"] for _, _, _, r, _, _ in runs]
    # Conversations: agents that asked where a slot was withheld and that did not, asking needlessly, the tasks in
    # full played beside the variants and not, an LLM user's answers, faults.
    talks = [a["conversation"] for r in reports for a in r["agents"] if a.get("conversation")]
    assert any(c["recall"]["successes"] == c["recall"]["total"] > 0 for c in talks)
    assert any(c["recall"]["successes"] < c["recall"]["total"] for c in talks)
    assert any(c["precision"]["successes"] < c["precision"]["total"] for c in talks)
    assert any(c["pass_k_in_full"] for c in talks) and any(c["pass_k_in_full"] is None for c in talks)
    assert any(c["llm_user_turns"] > 0 for c in talks)
    assert any("--faults" in a and a[a.index("--suite") + 1].startswith("conversational") for a, *_ in runs)
    # Table 10: rows of two LLM agents, ratios other than 1, a model without a price, protocol errors, and
    # infrastructure errors (episodes without tokens).
    rows = [row for r in reports for row in r.get("cost", [])]
    assert any(len(r.get("cost", [])) >= 2 for r in reports)
    assert any(row["tokens_ratio"] > 1 for row in rows) and any((row["cost_ratio"] or 1) > 1 for row in rows)
    assert any(row["cost_ratio"] is None and row["tokens_ratio"] for row in rows)
    assert any(row["llm"]["protocol_errors"] > 0 for row in rows)
    assert any(row["usage"]["episodes_with_tokens"] < row["episodes"] for row in rows)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_site_shows_what_the_definitions_give(seed, binary, scratch):
    """The results site of each run's store: its leaderboard recomputed, and its run page the report's page."""
    args, k, lines, report, text, page = played(seed, binary, scratch)
    pages = site_of(binary, scratch / f"run-{seed}.db", scratch / f"site-{seed}")
    ch = Checker(seed)
    run = report["run"]["id"]
    ch.eq("site: pages", sorted(pages), ["index.html", f"runs/{run}.html"])
    # The page test_the_report_is_what_its_definitions_give checks, figure by figure.
    ch.eq("site: the run's page is its report page", pages.get(f"runs/{run}.html") == page, True)
    check_index(ch, pages["index.html"], [(run, k, [Episode(line) for line in lines])], pages)
    assert not ch.problems, f"toolenv run {' '.join(args)}\n" + "\n".join(ch.problems[:40])
    assert ch.checked > 10


def test_the_site_of_several_runs_shows_what_the_definitions_give(binary, scratch):
    """A site of several runs in one store: leaderboards of several runs, each run's page and the comparisons,
    every figure against the recomputation."""
    store = scratch / "site.db"
    ch = Checker("site")
    runs, documents, recomputed = [], {}, {}
    for i, (seed, suite) in enumerate(SITE_RUNS):
        args, k = grid(seed)
        args[args.index("--suite") + 1] = suite
        run = f"run-{i + 1:04}"
        toolenv(binary, "run", *args, "--store", str(store))
        lines = [json.loads(line) for line in toolenv(binary, "export", run, "--store", str(store)).splitlines() if line]
        documents[run] = json.loads(toolenv(binary, "report", run, "--json", "--store", str(store)))
        episodes = recompute(run, k, lines, documents[run], ch, binary)  # the figures the pages' pointers resolve to
        recomputed[run] = curves(episodes, k)
        runs.append((run, k, episodes))
    pages = site_of(binary, store, scratch / "site")
    check_index(ch, pages["index.html"], runs, pages)
    boards = {}
    for run, k, episodes in runs:
        boards.setdefault(suite_of(episodes) + (k,), []).append(run)
    compared = [(run, members[0]) for members in boards.values() for run in members[1:]]
    ch.eq("site: pages", sorted(pages), sorted(
        ["index.html"] + [f"runs/{run}.html" for run, _, _ in runs] + [f"compare/{run}-vs-{base}.html" for run, base in compared]
    ))
    for run, _, _ in runs:
        check_page(ch, pages.get(f"runs/{run}.html", ""), [documents[run]], [recomputed[run]], f"runs/{run}.html")
    for run, base in compared:
        name = f"compare/{run}-vs-{base}.html"
        check_page(ch, pages.get(name, ""), [documents[run], documents[base]], [recomputed[run], recomputed[base]], name)
    assert len(boards) == 4 and max(len(m) for m in boards.values()) >= 3, boards
    assert len({key[:2] for key in boards}) == 3, "one suite and version with runs of different k"
    assert any("data-minus" in pages[f"compare/{run}-vs-{base}.html"] for run, base in compared), "a difference"
    assert not ch.problems, "\n".join(ch.problems[:40])
    assert ch.checked > 1000


def k_of(figures, ptr):
    """The k of the overall pass^k a page's pointer names: pass^1, its run's pass^k, or a curve's pass^j."""
    m = re.fullmatch(r"/runs/(\d+)/report/agents/\d+/overall/(pass_1|pass_k)/value", ptr)
    if m:
        return 1 if m.group(2) == "pass_1" else figures["runs"][int(m.group(1))]["report"]["k"]
    m = re.fullmatch(r"/runs/\d+/curves/\d+/overall/(\d+)/value", ptr)
    assert m, f"{ptr}: a difference of something other than an overall pass^k"
    return int(m.group(1)) + 1


def test_runs_of_different_k_are_compared_at_one_k(binary, scratch):
    """Two runs of different trial counts side by side: every difference on the page is of figures of one k (the
    smaller k, each run's from its own episodes), and with a common k of 1 pass^k has no difference, only n/a."""
    store = scratch / "different-k.db"
    args = ["--suite", "generated:77:1", "--domain", "scheduling", "--agent", "reference-no-retry,brittle"]
    args += ["--faults", "0.2", "--time-scale", "0", "--concurrency", "8"]
    ch = Checker("different k")
    documents, recomputed = {}, {}
    for i, k in enumerate([1, 3, 2]):
        run = f"run-{i + 1:04}"
        toolenv(binary, "run", *args, "--trials", str(k), "--store", str(store))
        lines = [json.loads(line) for line in toolenv(binary, "export", run, "--store", str(store)).splitlines() if line]
        documents[run] = json.loads(toolenv(binary, "report", run, "--json", "--store", str(store)))
        recomputed[run] = curves(recompute(run, k, lines, documents[run], ch, binary), k)
    for base, run, common in [("run-0001", "run-0002", 1), ("run-0002", "run-0003", 2), ("run-0003", "run-0002", 2)]:
        page = scratch / f"{run}-vs-{base}.html"
        toolenv(binary, "report", base, run, "--html", str(page), "--store", str(store))
        html = page.read_text()
        name = f"{run} vs {base}"
        check_page(ch, html, [documents[base], documents[run]], [recomputed[base], recomputed[run]], name)
        figures = {"runs": [documents[base], documents[run]]}
        differences = re.findall(r'data-ptr="([^"]*)"[^>]*data-minus="([^"]*)"', html)
        for ptr, minus in differences:
            ch.eq(f"{name}: the k of {ptr} − {minus}", k_of(figures, ptr), k_of(figures, minus))
        agents = len(documents[run]["report"]["agents"])
        # pass^1 per agent, and pass^k at the common k when it is more than 1.
        ch.eq(f"{name}: differences", agents * (1 if common == 1 else 2), len(differences))
        ch.eq(f"{name}: k differs", True, f"k differs: {documents[base]['report']['k']} vs {documents[run]['report']['k']}" in html)
        ch.eq(f"{name}: pass^k n/a", common == 1, "n/a (k differs" in html)
    assert not ch.problems, "\n".join(ch.problems[:40])
    assert ch.checked > 100
