"""toolenv suites as Inspect AI tasks (``pip install inspect-ai``).

Each sample is a toolenv episode: a task of the suite at one ε and one fault
profile (λ), played once per epoch, the epoch being the trial. The episode's
tools are the model's Inspect tools; a fault delivered as an error status (or
a broken business rule) reaches the model as a tool error; when the model
calls the ``finish`` tool, or stops calling tools, the episode is finished
with its answer and the tokens Inspect counted, and the verdict is the score
(1 or 0, the checks in its metadata). ``finish``'s parameters are a prose
``answer`` and, for a task with a typed answer (the episode's
``answer_schema_json``), that answer's fields: the fields the model fills are
sent as the typed answer (``answer_json``, judged field by field instead of
the prose); without ``finish`` the model's last message is the answer. Scores are reduced over the trials by ``mean``
(pass^1) and Inspect's ``pass_k`` (pass^k, the unbiased estimator toolenv
reports), so both come out of Inspect's own log.

    inspect eval python/toolenv/integrations/inspect_tasks.py@toolenv_suite \\
        -T server=127.0.0.1:50051 -T domain=travel -T trials=2 -T faults=0.0,0.2 \\
        --model openai/gpt-4o-mini

Parameters (``-T name=value``): ``server`` (``host:port``; else
``$TOOLENV_SERVER``), ``suite`` (``paper``, ``generated:SEED:N``, …),
``domain``, ``level``, ``epsilon`` and ``faults`` (one value or a
comma-separated list: the grid), ``trials`` (epochs), ``seed``, ``delivery``
(``status`` or ``in_band``), ``message_limit`` and ``tasks`` (task ids,
comma-separated: only these).
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Optional, Sequence, Union

from google.protobuf.json_format import MessageToDict
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, mean, pass_k, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolError, ToolParams

from toolenv.aio import AsyncClient
from toolenv.client import Client, answer_schema, finish_request
from toolenv.env import FINISH, finish_answer, finish_spec
from toolenv.v1 import toolenv_pb2 as pb

SYSTEM = (
    "You are an agent working in a simulated environment. Use the tools to do the user's task; "
    "tools may fail transiently (retry when it makes sense). When the task is done, call finish with a short answer "
    "and, when finish asks for typed answer fields, every one of them filled with its exact value."
)

#: Where the verdict of a sample's episode is kept (``state.store``).
VERDICT = "toolenv_verdict"


def _values(value: Union[str, float, int, Sequence, None], cast) -> List:
    """One value, a comma-separated string or a list, as a list of ``cast`` values."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [cast(v) for v in value]
    return [cast(v.strip()) for v in str(value).split(",") if v.strip()]


def _domain(name: Optional[str]) -> int:
    if not name:
        return pb.DOMAIN_UNSPECIFIED
    try:
        return pb.Domain.Value(f"DOMAIN_{name.upper()}")
    except ValueError:
        known = [n[len("DOMAIN_") :].lower() for n in pb.Domain.keys() if n != "DOMAIN_UNSPECIFIED"]
        raise ValueError(f"unknown domain {name!r}; one of {known}") from None


def samples(
    server: str,
    suite: str = "paper",
    domain: Optional[str] = None,
    level: int = 0,
    epsilon=0.0,
    faults="0.0",
    seed: int = 0,
    task_ids=None,
) -> List[Sample]:
    """A sample per (task, ε, fault profile) of the suite, as the server lists its tasks (only ``task_ids`` when given)."""
    with Client(server) as client:
        request = pb.ListTasksRequest(domain=_domain(domain), level=int(level or 0), suite=suite)
        tasks = list(client.env.ListTasks(request, metadata=client.metadata).tasks)
    wanted = _values(task_ids, str)
    if wanted:
        unknown = sorted(set(wanted) - {t.id for t in tasks})
        if unknown:
            raise ValueError(f"tasks not in suite {suite!r} (with this domain and level): {unknown}")
        tasks = [t for t in tasks if t.id in wanted]
    if not tasks:
        raise ValueError(f"no task of suite {suite!r} matches domain={domain!r} level={level!r}")
    out = []
    for summary in tasks:
        for eps in _values(epsilon, float):
            for profile in _values(faults, str):
                out.append(
                    Sample(
                        id=f"{summary.id}@eps={eps:g},faults={profile}",
                        input=summary.description,
                        metadata={"task_id": summary.id, "epsilon": eps, "faults": profile, "seed": int(seed)},
                    )
                )
    return out


def _tool(client: AsyncClient, episode_id: str, spec, finished: Optional[dict] = None) -> ToolDef:
    """An episode's tool as an Inspect tool: its call is one CallTool; an error is a tool error
    (and so is a call after ``finish``, in ``finished``)."""

    async def call(**arguments: Any) -> str:
        if finished:
            raise ToolError("the task is finished: no tool can be called after finish")
        result = await client.call_tool(episode_id, spec.name, arguments)
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    schema = json.loads(spec.parameters_json_schema or "{}")
    params = ToolParams.model_validate({"type": "object", "properties": {}, "required": [], **schema})
    return ToolDef(call, name=spec.name, description=spec.description, parameters=params)


def _finish_tool(schema: Optional[dict], finished: dict, state: TaskState) -> ToolDef:
    """The ``finish`` tool: its parameters are a prose answer and the episode's typed answer fields
    (:func:`toolenv.env.finish_spec`); a call keeps its arguments in ``finished`` and ends the
    sample's generate loop (the episode is finished by the solver)."""

    async def finish(**arguments: Any) -> str:
        finished.setdefault("arguments", arguments)
        state.completed = True
        return "finished"

    spec = finish_spec(schema)
    params = ToolParams.model_validate(spec["parameters"])
    return ToolDef(finish, name=FINISH, description=spec["description"], parameters=params)


@solver
def toolenv_agent(server: str, delivery: Optional[str] = None):
    """Plays the sample's episode: the model calls the episode's tools until it answers (calls
    ``finish``, or replies with no call); then the episode is finished with its answer, typed or not."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        async with AsyncClient(server) as client:
            episode = await client.create_episode(
                meta["task_id"], seed=meta["seed"], trial=state.epoch - 1, epsilon=meta["epsilon"], faults=meta["faults"], delivery=delivery
            )
            schema = answer_schema(episode)
            finished: dict = {}
            state.messages = [ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=episode.description)]
            state.tools = [_tool(client, episode.episode_id, spec, finished).as_tool() for spec in episode.tools]
            state.tools.append(_finish_tool(schema, finished, state).as_tool())
            try:
                state = await generate(state, tool_calls="loop")
            finally:
                usage = state.output.usage if state.output else None
                # finish's answer, else the text the model wrote (beside its finish call, or as its last reply).
                answer, typed = finish_answer(finished.get("arguments"), schema, strict=False)
                answer = answer or (state.output.completion if state.output else "")
                request = finish_request(
                    episode.episode_id,
                    answer=answer,
                    answer_json=typed,
                    usage=pb.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens) if usage else None,
                )
                verdict = await client.env.FinishEpisode(request, metadata=client.metadata, timeout=client.timeout)
                state.store.set(VERDICT, MessageToDict(verdict, preserving_proto_field_name=True, always_print_fields_with_no_presence=True))
                state.metadata["episode_id"] = episode.episode_id
                state.metadata["answer"], state.metadata["answer_json"] = answer, typed
        return state

    return solve


@scorer(metrics=[mean(), stderr()])
def toolenv_verdict():
    """The verdict of the sample's episode: 1 when it passed, 0 otherwise; its checks, feasibility and faults as metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        verdict = state.store.get(VERDICT)
        if verdict is None:
            return Score(value=0.0, explanation="the episode was not finished")
        checks = verdict.get("checks", [])
        failed = [c["name"] for c in checks if not c.get("passed")]
        return Score(
            value=1.0 if verdict.get("passed") else 0.0,
            answer=state.metadata.get("answer", state.output.completion if state.output else ""),
            explanation="passed" if verdict.get("passed") else "failed: " + "; ".join(failed),
            metadata={
                "checks": checks,
                "feasible": verdict.get("feasible"),
                "fault_stats": verdict.get("fault_stats", {}),
                "episode_id": state.metadata.get("episode_id"),
                "answer_json": state.metadata.get("answer_json"),
            },
        )

    return score


@task
def toolenv_suite(
    server: Optional[str] = None,
    suite: str = "paper",
    domain: Optional[str] = None,
    level: int = 0,
    epsilon: Union[str, float] = 0.0,
    faults: str = "0.0",
    trials: int = 1,
    seed: int = 0,
    delivery: Optional[str] = None,
    message_limit: int = 60,
    tasks: Optional[str] = None,
) -> Task:
    """The suite (filtered by domain and level) on the grid ε × faults, ``trials`` epochs each."""
    server = server or os.environ.get("TOOLENV_SERVER")
    if not server:
        raise ValueError("give the toolenv server: -T server=host:port (or set TOOLENV_SERVER)")
    trials = int(trials)
    return Task(
        dataset=MemoryDataset(samples(server, suite, domain, level, epsilon, faults, seed, tasks), name=f"toolenv-{suite}"),
        solver=toolenv_agent(server, delivery),
        scorer=toolenv_verdict(),
        epochs=Epochs(trials, ["mean", pass_k(trials)]),
        message_limit=int(message_limit),
    )
