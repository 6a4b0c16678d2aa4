"""A Gymnasium-style environment over a toolenv server.

One episode per ``reset``; one tool call per ``step``; the verdict of the
task's oracle is the reward when the episode ends. It follows Gymnasium's
API (``reset`` → ``(observation, info)``, ``step`` → ``(observation, reward,
terminated, truncated, info)``) without depending on gymnasium: observations
are text and JSON, which Gymnasium's spaces do not describe usefully.

Everything is the server's: the description, the faults, the trajectory and
the verdict. The environment makes exactly one CallTool per step (no
retries: recovering from faults is the agent's job, and what is measured).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from toolenv.client import Arguments, CallResult, Client, pb

__all__ = ["FINISH", "ToolEnv", "ledger", "reset_observation", "reset_settings"]

#: The action that ends the episode: ``{"tool": "finish"}`` (optionally with ``"arguments": {"answer": ...}``).
FINISH = "finish"


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
    today, tools with their JSON Schemas and call budget; its id, fault profile and time scale."""
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
        previous reply), a pair ``(name, arguments)``, or ``{"tool": "finish"}``.

        Returns ``(observation, reward, terminated, truncated, info)``: the observation is
        what the agent reads (``text``, ``is_error``); the reward is 0 until the episode
        ends, then 1.0 if the verdict passed, else 0.0; ``terminated`` after ``finish``;
        ``truncated`` when the call budget is spent (the episode is then finished, so the
        reward is the verdict); ``info`` has the call's ledger entry (``fault``,
        ``delay_ms``, ``drawn_without_effect``), the whole ``ledger`` of faults so far, and
        ``verdict`` once finished.
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
        answer = arguments.get("answer")
        extra = {"answer": answer} if answer is not None else {}
        unknown = set(arguments) - {"answer"}
        if unknown:
            raise ValueError(f"finish takes only 'answer', not {sorted(unknown)}")
        if extra and "answer" not in pb.FinishEpisodeRequest.DESCRIPTOR.fields_by_name:
            raise ValueError("this server's contract has no FinishEpisodeRequest.answer: finish without an answer")
        self.verdict = self.client.finish_episode(self.episode.episode_id, **extra)
        self._done = True
        trajectory = self.client.trajectory(self.episode.episode_id)
        reward = 1.0 if self.verdict.passed else 0.0
        observation = {"text": self.verdict.state_diff_text, "is_error": False, "kind": "verdict"}
        info = {
            "verdict": self.verdict,
            "passed": self.verdict.passed,
            "feasible": self.verdict.feasible if self.verdict.HasField("feasible") else None,
            "ledger": ledger(trajectory),
        }
        return observation, reward, not truncated, truncated, info

    def trajectory(self) -> pb.Trajectory:
        """The current episode's trajectory, as the server recorded it."""
        return self.client.trajectory(self.episode_id)

    def close(self) -> None:
        self.client.close()
