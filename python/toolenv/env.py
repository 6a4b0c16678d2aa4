"""A Gymnasium-style environment over a toolenv server.

One episode per ``reset``; one tool call per ``step``; the verdict of the
task's oracle is the reward when the episode ends. It follows Gymnasium's
API (``reset`` → ``(observation, info)``, ``step`` → ``(observation, reward,
terminated, truncated, info)``) without depending on gymnasium: observations
are text and JSON, which Gymnasium's spaces do not describe usefully.

Everything is the server's: the description, the faults, the trajectory and
the verdict. The environment makes exactly one CallTool per step (no
retries: recovering from faults is the agent's job, and what is measured).

Typed answers: a task that asks a question may publish the JSON Schema of its
answer (``answer_schema_json``: fields such as a date, an amount, an id). The
reset's observation holds it (``answer_schema``, None for a task that asks
for no value) and the ``finish`` action's spec (``finish``: its parameters
are a prose ``answer`` and the schema's fields). The agent finishes with
``{"tool": "finish", "arguments": {"answer": "...", <field>: <value>, ...}}``:
the fields the schema names are sent as the typed answer (``answer_json``),
judged field by field instead of the prose, and ``answer`` (or ``summary``)
as the prose answer.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from toolenv.client import Arguments, CallResult, Client, answer_schema, pb

__all__ = [
    "FINISH",
    "PROSE",
    "ToolEnv",
    "answer_fields",
    "finish_answer",
    "finish_parameters",
    "finish_spec",
    "finish_tool",
    "ledger",
    "reset_observation",
    "reset_settings",
]

#: The action that ends the episode: ``{"tool": "finish"}``, optionally with ``"arguments"``:
#: a prose ``"answer"`` and the typed answer's fields (see :func:`finish_answer`).
FINISH = "finish"
#: The names finish's prose answer may take: ``answer``, or ``summary`` when there is no ``answer``.
PROSE = ("answer", "summary")
FINISH_DESCRIPTION = (
    "Ends the task: the environment judges the end state (and the answer) and returns the verdict; "
    "no tool can be called after it. Give the final answer if the task asks a question"
)


def answer_fields(schema: Optional[Mapping[str, Any]]) -> list:
    """The names of a typed answer's fields (the properties of :func:`toolenv.client.answer_schema`), in schema order."""
    properties = (schema or {}).get("properties")
    return list(properties) if isinstance(properties, Mapping) else []


def finish_parameters(schema: Optional[Mapping[str, Any]]) -> dict:
    """The JSON Schema of finish's arguments: a prose ``answer`` and, for a task with a typed
    answer, its fields beside it (required as the answer's schema requires them)."""
    properties: dict = {
        "answer": {"type": "string", "description": "Your final answer to the user: what the task asks, with its exact values, or why it cannot be done."}
    }
    required: list = []
    if schema:
        for name, field in (schema.get("properties") or {}).items():
            field = dict(field)
            field["description"] = f"Typed answer: {field.get('description') or name} (judged instead of the text answer)."
            properties[name] = field
        required = [name for name in schema.get("required") or [] if name in properties]
    return {"type": "object", "properties": properties, "required": required}


def finish_spec(schema: Optional[Mapping[str, Any]]) -> dict:
    """The finish action as a reset's observation gives it, in the shape of its ``tools``
    (``name``, ``description``, ``parameters``, ``mutates_state``)."""
    description = FINISH_DESCRIPTION + (": fill every typed answer field with its exact value." if answer_fields(schema) else ".")
    return {"name": FINISH, "description": description, "parameters": finish_parameters(schema), "mutates_state": False}


def finish_tool(schema: Optional[Mapping[str, Any]]) -> dict:
    """The finish tool as chat templates take it (``{"type": "function", "function": {...}}``),
    its parameters from the episode's answer schema: offer it beside
    ``toolenv.calls.chat_tools(tools, finish=False)``."""
    spec = finish_spec(schema)
    return {"type": "function", "function": {"name": FINISH, "description": spec["description"], "parameters": spec["parameters"]}}


def finish_answer(arguments: Optional[Mapping[str, Any]], schema: Optional[Mapping[str, Any]], *, strict: bool = True) -> Tuple[Optional[str], Optional[dict]]:
    """Reads finish's arguments as ``(answer, answer_json)``: the prose answer (``answer``, else
    ``summary``; a value that is not text as its JSON) and the typed answer, a dict of the
    fields ``schema`` names that were given (None when none was). ``strict``: any other
    argument is a :class:`ValueError` (an environment's action); otherwise it is ignored
    (a model's call, which may add arguments of its own)."""
    arguments = dict(arguments or {})
    fields = answer_fields(schema)
    unknown = sorted(set(arguments) - set(PROSE) - set(fields))
    if unknown and strict:
        takes = ", ".join(repr(name) for name in list(PROSE) + fields)
        raise ValueError(f"finish takes {takes}, not {unknown}" + ("" if fields else " (this task asks for no typed answer)"))
    prose = next((arguments[name] for name in PROSE if arguments.get(name) is not None), None)
    if prose is not None and not isinstance(prose, str):
        prose = json.dumps(prose, ensure_ascii=False)
    typed = {name: arguments[name] for name in fields if arguments.get(name) is not None}
    return prose, typed or None


def _fault(record) -> Optional[dict]:
    if not record.HasField("fault"):
        return None
    return {"kind": record.fault.kind, "new": record.fault.new, "recoverable": record.fault.recoverable}


def ledger(trajectory: pb.Trajectory) -> list:
    """The fault ledger of a trajectory: ``{"index", "tool", "kind", "new", "recoverable"}`` per call a fault met."""
    return [dict(index=c.index, tool=c.tool_name, **_fault(c)) for c in trajectory.calls if c.HasField("fault")]


def reset_settings(settings: Mapping[str, Any], options: Optional[Mapping[str, Any]]) -> Tuple[str, dict]:
    """A reset's task id and episode settings: its keyword arguments, overridden by
    Gymnasium's ``options``; :class:`ValueError` for an unknown option or no task."""
    merged = dict(settings)
    for name, value in (options or {}).items():
        if name not in merged:
            raise ValueError(f"reset: unknown option {name!r} (known: {', '.join(merged)})")
        merged[name] = value
    task_id = merged.pop("task", None)
    if not task_id:
        raise ValueError("reset: which task? pass task='domain/name/NNN' (see Client.list_tasks)")
    return task_id, merged


def reset_observation(episode: pb.Episode) -> Tuple[dict, dict]:
    """The observation and info a reset gives for a new episode: its task id, description,
    today, tools with their JSON Schemas, call budget, typed answer's schema (``answer_schema``,
    None when it asks for no value) and the finish action's spec (``finish``); its id, fault
    profile and time scale."""
    schema = answer_schema(episode)
    observation = {
        "task_id": episode.task_id,
        "description": episode.description,
        "today": episode.today,
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": json.loads(tool.parameters_json_schema),
                "mutates_state": tool.mutates_state,
            }
            for tool in episode.tools
        ],
        "max_calls": episode.max_calls,
        "answer_schema": schema,
        "finish": finish_spec(schema),
    }
    info = {"episode_id": episode.episode_id, "fault_profile": json.loads(episode.fault_profile_json or "null"), "time_scale": episode.time_scale}
    return observation, info


class ToolEnv:
    """Episodes of a toolenv server as a Gymnasium-style environment.

    ``server`` is a ``host:port`` address or a :class:`toolenv.Client`.
    """

    metadata = {"render_modes": []}

    def __init__(self, server: Union[str, Client], *, token: Optional[str] = None):
        self.client = server if isinstance(server, Client) else Client(server, token=token)
        self.episode: Optional[pb.Episode] = None
        self.verdict: Optional[pb.Verdict] = None
        self.calls = 0
        self._done = True

    @property
    def episode_id(self) -> str:
        if self.episode is None:
            raise RuntimeError("no episode: call reset() first")
        return self.episode.episode_id

    @property
    def answer_schema(self) -> Optional[dict]:
        """The JSON Schema of the current episode's typed answer; None when it asks for no value (or before reset)."""
        return None if self.episode is None else answer_schema(self.episode)

    def reset(
        self,
        task: Optional[str] = None,
        seed: Optional[int] = 0,
        epsilon: float = 0.0,
        faults: Union[str, pb.FaultProfile, None] = None,
        *,
        trial: int = 0,
        only: Sequence[str] = (),
        delivery: Union[str, int, None] = None,
        time_scale: Optional[float] = 0.0,
        options: Optional[Mapping[str, Any]] = None,
    ) -> Tuple[dict, dict]:
        """Starts an episode of ``task`` under (seed, ε, fault profile λ).

        ``options`` (Gymnasium's way) may carry any of the keyword arguments,
        e.g. ``reset(seed=3, options={"task": "travel/...", "faults": "0.2"})``.
        Returns the observation (task id, description, today, tools with their
        JSON Schemas, call budget) and an info dict (episode id, fault profile).
        """
        settings = dict(task=task, epsilon=epsilon, faults=faults, trial=trial, only=only, delivery=delivery, time_scale=time_scale)
        task_id, settings = reset_settings(settings, options)
        self.episode = self.client.create_episode(task_id, seed=seed or 0, **settings)
        self.verdict, self.calls, self._done = None, 0, False
        return reset_observation(self.episode)

    def step(self, action: Union[Mapping[str, Any], Tuple[str, Arguments]]) -> Tuple[dict, float, bool, bool, dict]:
        """Plays one action: a tool call ``{"tool": name, "arguments": {...}}`` (optionally
        ``"idempotency_key"`` and ``"waited_ms"``, the virtual milliseconds waited since the
        previous reply), a pair ``(name, arguments)``, or ``{"tool": "finish"}``, optionally with
        ``"arguments"``: the prose ``answer`` and the typed answer's fields (the reset's
        ``answer_schema``), sent as ``answer_json`` (see :func:`finish_answer`; another argument
        is a :class:`ValueError`).

        Returns ``(observation, reward, terminated, truncated, info)``: the observation is
        what the agent reads (``text``, ``is_error``); the reward is 0 until the episode
        ends, then 1.0 if the verdict passed, else 0.0; ``terminated`` after ``finish``;
        ``truncated`` when the call budget is spent (the episode is then finished, so the
        reward is the verdict); ``info`` has the call's ledger entry (``fault``,
        ``delay_ms``, ``drawn_without_effect``), the whole ``ledger`` of faults so far, and
        ``verdict`` once finished (with ``answer_json``, the typed answer sent, if any).
        """
        if self.episode is None or self._done:
            raise RuntimeError("the episode is over (or never started): call reset()")
        if isinstance(action, tuple):
            tool, arguments = action
            action = {"tool": tool, "arguments": arguments}
        tool = action.get("tool") or action.get("name")
        if not tool:
            raise ValueError("step: the action names no tool ({'tool': name, 'arguments': {...}})")
        if tool == FINISH:
            return self._finish(action.get("arguments") or {}, truncated=False)
        before = self.calls
        result = self.client.call_tool(
            self.episode.episode_id,
            tool,
            action.get("arguments"),
            idempotency_key=action.get("idempotency_key", ""),
            waited_ms=action.get("waited_ms"),
        )
        trajectory = self.client.trajectory(self.episode.episode_id)
        self.calls = len(trajectory.calls)
        record = trajectory.calls[-1] if self.calls > before else None
        info = self._info(result, record, trajectory)
        observation = {"text": result.text, "is_error": result.is_error, "kind": result.kind}
        if self.calls >= self.episode.max_calls:
            _, reward, _, _, finished = self._finish({}, truncated=True)
            info.update(verdict=finished["verdict"], passed=finished["passed"], ledger=finished["ledger"])
            return observation, reward, False, True, info
        return observation, 0.0, False, False, info

    def _info(self, result: CallResult, record, trajectory: pb.Trajectory) -> dict:
        info: dict = {
            "call_index": record.index if record is not None else None,
            "reached_episode": record is not None,
            "fault": _fault(record) if record is not None else None,
            "delay_ms": record.delay_ms if record is not None else 0,
            "drawn_without_effect": record.drawn_without_effect if record is not None else "",
            "code": result.code,
            "reason": result.reason,
            "retry_after_ms": result.retry_after_ms,
            "retry_after_virtual_ms": result.retry_after_virtual_ms,
        }
        info["ledger"] = ledger(trajectory)
        return info

    def _finish(self, arguments: Mapping[str, Any], *, truncated: bool) -> Tuple[dict, float, bool, bool, dict]:
        answer, answer_json = finish_answer(arguments, self.answer_schema)
        self.verdict = self.client.finish_episode(self.episode.episode_id, answer=answer, answer_json=answer_json)
        self._done = True
        trajectory = self.client.trajectory(self.episode.episode_id)
        reward = 1.0 if self.verdict.passed else 0.0
        observation = {"text": self.verdict.state_diff_text, "is_error": False, "kind": "verdict"}
        info = {
            "verdict": self.verdict,
            "passed": self.verdict.passed,
            "feasible": self.verdict.feasible if self.verdict.HasField("feasible") else None,
            "ledger": ledger(trajectory),
            "answer_json": answer_json,
        }
        return observation, reward, not truncated, truncated, info

    def trajectory(self) -> pb.Trajectory:
        """The current episode's trajectory, as the server recorded it."""
        return self.client.trajectory(self.episode_id)

    def close(self) -> None:
        self.client.close()
