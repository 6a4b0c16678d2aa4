"""An Inspect AI task whose model plays one toolenv episode over MCP, with
`toolenv mcp` behind `toolenv chaos`: the proxy's faults (timeouts, resets,
rate limits, cut, stale and drifted results) reach the model as tool errors
and odd results, and the score is the episode's verdict, which the model
gets by calling `finish` (sent again until it gives one).

    inspect eval examples/python/inspect_mcp_chaos.py --model openai/gpt-4o-mini \\
        -T task_id=travel/cheapest-flight/001 -T faults=0.2 -T seed=3

Needs `toolenv` on PATH (or -T toolenv=PATH) and `pip install inspect-ai mcp`.
"""

import json

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import solver, use_tools
from inspect_ai.tool import mcp_connection, mcp_server_stdio

INSTRUCTIONS = (
    "Use the tools to do the task below. Tools may fail or return odd results: read what they return, and retry "
    "when it makes sense. When you are done, call `finish` with a short answer; if `finish` does not return a "
    "verdict, call it again.\n\n"
)


def server_args(task_id, faults, seed, toolenv, ledger=None):
    """`toolenv chaos … -- toolenv mcp TASK`: the episode's MCP server behind the proxy."""
    chaos = ["chaos", "--faults", str(faults), "--seed", str(seed), "--time-scale", "0"]
    return [*chaos, *(["--ledger", ledger] if ledger else []), "--", toolenv, "mcp", task_id]


def verdict_of(messages):
    """The verdict the last `finish` returned, if one did (a drifted result nests it under "data")."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageTool) and message.function == "finish" and message.error is None:
            try:
                finished = json.loads(message.text)
            except json.JSONDecodeError:
                continue
            finished = finished.get("data", finished) if isinstance(finished, dict) else {}
            if "verdict" in finished:
                return finished["verdict"]
    return None


@scorer(metrics=[accuracy()])
def episode_verdict():
    """1 when the episode's verdict passed; 0 when it failed or `finish` never gave one."""

    async def score(state, target):
        verdict = verdict_of(state.messages)
        if verdict is None:
            return Score(value=0, explanation="finish never returned a verdict")
        failed = [c["name"] for c in verdict.get("checks", []) if not c.get("passed")]
        return Score(value=int(bool(verdict.get("passed"))), explanation="passed" if verdict.get("passed") else "; ".join(failed))

    return score


@solver
def play(server):
    """The model's tool loop over one connection to the server: an episode
    lives as long as its `toolenv mcp` process."""

    async def solve(state, generate):
        async with mcp_connection([server]):
            return await generate(state)

    return solve


@task
def toolenv_chaos(task_id="travel/cheapest-flight/001", faults="0.2", seed=0, toolenv="toolenv", description="", ledger=None):
    """One episode of `task_id` through the chaos proxy at `faults`; `description` is the
    task as the model reads it (default: `toolenv mcp`'s own instructions name it)."""
    server = mcp_server_stdio(name="toolenv", command=toolenv, args=server_args(task_id, faults, seed, toolenv, ledger))
    text = description or f"Play the toolenv episode of task {task_id}: its tools say what to do."
    return Task(
        dataset=[Sample(input=INSTRUCTIONS + text, metadata={"task_id": task_id, "faults": str(faults), "seed": seed})],
        solver=[use_tools(server), play(server)],
        scorer=episode_verdict(),
    )
