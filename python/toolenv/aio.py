"""asyncio over ``grpc.aio``: a client, and a Gymnasium-style environment whose
``reset`` and ``step`` are coroutines, for stepping many episodes from one
thread (see :mod:`toolenv.vector`) and for branching an episode.

    client = AsyncClient("127.0.0.1:50051")
    env = AsyncToolEnv(client)
    observation, info = await env.reset("travel/cheapest-flight/001", seed=0)
    observation, reward, terminated, truncated, info = await env.step({"tool": "search_flights", "arguments": {...}})
    group = await env.branch(8)  # 8 continuations sharing the calls so far

A step is exactly one CallTool, and nothing else, so that stepping is as fast
as the server: the call's own outcome goes in ``info`` (``call_index``,
``kind``, ``code``, ``reason``, retry advice); the fault ledger, every check
and the reward's terms come with the episode's last step (``detailed=True``
also reads the trajectory after every step, for the step's ledger entry, as
:class:`toolenv.ToolEnv` does).

Errors, as documented for every environment of the package:

- a tool the episode does not have, or malformed arguments: the server's
  error status comes back as the observation (``kind`` "status",
  ``is_error``), and the call spends a step of the budget;
- an action that is no tool call at all (no tool named, arguments that are
  not JSON-serializable): :class:`ValueError`, before anything is sent;
- a step after the episode ended (or before ``reset``): :class:`EpisodeOver`;
- a call the server does not answer within ``timeout`` seconds: a
  DEADLINE_EXCEEDED status as the observation (never a hung step).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import grpc

from toolenv.client import (
    Arguments,
    CallResult,
    answer_json_text,
    answer_schema,
    arguments_json,
    call_request,
    create_request,
    fault_delivery,
    finish_request,
    pb,
    reply_result,
    routed,
    status_error,
)
from toolenv.env import FINISH, _fault, finish_answer, ledger, reset_observation, reset_settings
from toolenv.rewards import Reward, reward_info
from toolenv.stream import CallBatcher
from toolenv.v1 import toolenv_pb2_grpc as pb_grpc

__all__ = ["Action", "AsyncClient", "AsyncToolEnv", "EpisodeOver", "normalize_action"]

#: A tool call: ``{"tool": name, "arguments": {...}}`` (optionally ``idempotency_key``,
#: ``waited_ms``), a pair ``(name, arguments)``, or ``{"tool": "finish"}``
#: (optionally with ``"arguments"``: a prose ``"answer"`` and the fields of the
#: episode's typed answer, sent as ``answer_json``: see :func:`toolenv.env.finish_answer`).
Action = Union[Mapping[str, Any], Tuple[str, Arguments]]


class EpisodeOver(RuntimeError):
    """A step of an episode that has ended (or never started): reset it first."""


@dataclass(frozen=True)
class _Call:
    tool: str
    arguments_json: str
    idempotency_key: str
    waited_ms: Optional[int]
    answer: Optional[str]
    #: finish's typed answer, as JSON text (the fields of the episode's answer schema given).
    answer_json: Optional[str] = None


def normalize_action(action: Action, *, answer_schema: Optional[Mapping[str, Any]] = None) -> _Call:
    """Checks an action and reads it as a call; :class:`ValueError` names what is wrong.
    ``answer_schema``: the episode's typed answer (:func:`toolenv.client.answer_schema`),
    whose fields a finish action may give beside its ``answer``."""
    if isinstance(action, tuple):
        if len(action) != 2:
            raise ValueError(f"an action pair is (tool, arguments), not {len(action)} items")
        action = {"tool": action[0], "arguments": action[1]}
    if not isinstance(action, Mapping):
        raise ValueError(f"an action is a mapping {{'tool': name, 'arguments': {{...}}}} or a pair, not {type(action).__name__}")
    tool = action.get("tool") or action.get("name")
    if not isinstance(tool, str) or not tool:
        raise ValueError("the action names no tool ({'tool': name, 'arguments': {...}})")
    arguments = action.get("arguments")
    answer = typed = None
    if tool == FINISH:
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ValueError(f"the arguments of finish are a mapping, not {type(arguments).__name__}")
        answer, fields = finish_answer(arguments, answer_schema)
        try:
            typed = answer_json_text(fields)
        except (TypeError, ValueError) as error:
            raise ValueError(f"the typed answer of finish is not JSON: {error}") from None
    try:
        text = arguments_json(arguments)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the arguments of {tool} are not JSON: {error}") from None
    return _Call(tool, text, str(action.get("idempotency_key") or ""), action.get("waited_ms"), answer, typed)


class AsyncClient:
    """A ``grpc.aio`` connection to a toolenv server (the asyncio twin of :class:`toolenv.Client`).

    Create it inside the event loop that uses it. ``timeout`` (seconds, None: no
    limit) bounds every call. ``streaming=True`` sends tool calls batched over one
    ``CallTools`` stream (:mod:`toolenv.stream`) instead of one unary CallTool
    each: the same outcomes and trajectories, less work per call.
    """

    def __init__(
        self, url: str, *, token: Optional[str] = None, metadata: Sequence = (), timeout: Optional[float] = 30.0, streaming: bool = False
    ):
        target = url.split("://", 1)[1] if "://" in url else url
        self.url = target
        self.timeout = timeout
        self.channel = grpc.aio.insecure_channel(target)
        self.metadata = tuple(metadata) + ((("authorization", f"Bearer {token}"),) if token else ())
        self.env = pb_grpc.ToolEnvStub(self.channel)
        self._batcher = CallBatcher(self.env, self.metadata, timeout) if streaming else None

    async def close(self) -> None:
        """Ends the calls stream, if any, and closes the channel."""
        if self._batcher is not None:
            await self._batcher.close()
        await self.channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def list_tasks(self, domain: int = pb.DOMAIN_UNSPECIFIED, level: int = 0) -> list:
        """The suite's tasks (summaries)."""
        reply = await self.env.ListTasks(pb.ListTasksRequest(domain=domain, level=level), metadata=self.metadata, timeout=self.timeout)
        return list(reply.tasks)

    async def create_episode(self, task_id: str, **settings: Any) -> pb.Episode:
        """Starts an episode; ``settings`` are those of :meth:`toolenv.Client.create_episode`."""
        return await self.env.CreateEpisode(create_request(task_id, **settings), metadata=self.metadata, timeout=self.timeout)

    async def call_tool(
        self, episode_id: str, tool: str, arguments: Arguments = None, *, idempotency_key: str = "", waited_ms: Optional[int] = None
    ) -> CallResult:
        """One CallTool, its outcome (error statuses included) as a :class:`CallResult`."""
        request = call_request(episode_id, tool, arguments, idempotency_key=idempotency_key, waited_ms=waited_ms)
        if self._batcher is not None:
            return await self._batcher.call(request)
        try:
            reply = await self.env.CallTool(request, metadata=routed(self.metadata, episode_id), timeout=self.timeout)
        except grpc.aio.AioRpcError as error:
            return status_error(error)
        return reply_result(reply)

    async def fork_episode(
        self, episode_id: str, calls: int, *, delivery: Union[str, int, None] = None, time_scale: Optional[float] = None
    ) -> pb.Episode:
        """A new live episode in the state ``episode_id`` had after its first ``calls`` calls."""
        request = pb.ForkEpisodeRequest(episode_id=episode_id, calls=calls, fault_delivery=fault_delivery(delivery), time_scale=time_scale)
        return await self.env.ForkEpisode(request, metadata=routed(self.metadata, episode_id), timeout=self.timeout)

    async def finish_episode(
        self,
        episode_id: str,
        *,
        usage: Optional[pb.Usage] = None,
        answer: Optional[str] = None,
        answer_json: Union[Mapping[str, Any], str, None] = None,
        **extra: Any,
    ) -> pb.Verdict:
        """Ends an episode and returns the verdict: the arguments of :meth:`toolenv.Client.finish_episode`
        (``answer_json``: the typed answer, a dict or its JSON text)."""
        request = finish_request(episode_id, usage=usage, answer=answer, answer_json=answer_json, **extra)
        return await self.env.FinishEpisode(request, metadata=routed(self.metadata, episode_id), timeout=self.timeout)

    async def trajectory(self, episode_id: str) -> pb.Trajectory:
        """An episode's trajectory, as the server recorded it."""
        metadata = routed(self.metadata, episode_id)
        return await self.env.GetTrajectory(pb.GetTrajectoryRequest(episode_id=episode_id), metadata=metadata, timeout=self.timeout)


class AsyncToolEnv:
    """One episode at a time, stepped with coroutines (see the module's documentation).

    ``server`` is a ``host:port`` address or an :class:`AsyncClient` (share one
    between many environments: one channel carries them all). ``reward`` says
    how the episode's end is scored (the verdict by default).
    """

    def __init__(self, server: Union[str, AsyncClient], *, token: Optional[str] = None, reward: Reward = Reward(), detailed: bool = False):
        self.client = server if isinstance(server, AsyncClient) else AsyncClient(server, token=token)
        self.reward = reward
        self.detailed = detailed
        self.episode: Optional[pb.Episode] = None
        self.verdict: Optional[pb.Verdict] = None
        #: Steps taken in this episode (calls sent, replayed calls of a branch included).
        self.steps = 0
        self.done = True
        self._delivery: Union[str, int, None] = None
        self._recorded = 0  # calls the server has recorded, as last read (detailed steps)
        self._answer_schema: Optional[dict] = None  # read once per episode: every step's action is checked against it

    @property
    def episode_id(self) -> str:
        """The current episode's id."""
        if self.episode is None:
            raise EpisodeOver("no episode: call reset() first")
        return self.episode.episode_id

    @property
    def answer_schema(self) -> Optional[dict]:
        """The JSON Schema of the current episode's typed answer; None when it asks for no value (or before reset)."""
        return self._answer_schema

    async def reset(
        self, task: Optional[str] = None, seed: Optional[int] = 0, *, options: Optional[Mapping[str, Any]] = None, **settings: Any
    ) -> Tuple[dict, dict]:
        """Starts an episode of ``task`` under (seed, trial, ε, fault profile λ): the arguments and
        the returned observation and info of :meth:`toolenv.ToolEnv.reset` (``epsilon``,
        ``faults``, ``trial``, ``only``, ``delivery``, ``time_scale``, ``options``)."""
        defaults: Dict[str, Any] = dict(task=task, epsilon=0.0, faults=None, trial=0, only=(), delivery=None, time_scale=0.0)
        unknown = set(settings) - set(defaults)
        if unknown:
            raise TypeError(f"reset() got unexpected keyword argument(s) {sorted(unknown)}")
        task_id, settings = reset_settings({**defaults, **settings}, options)
        self._delivery = settings["delivery"]
        episode = await self.client.create_episode(task_id, seed=seed or 0, **settings)
        return self._start(episode, 0)

    def _start(self, episode: pb.Episode, steps: int) -> Tuple[dict, dict]:
        self.episode, self.verdict, self.steps, self.done = episode, None, steps, False
        self._answer_schema = answer_schema(episode)
        self._recorded = steps
        return reset_observation(episode)

    async def step(self, action: Action) -> Tuple[dict, float, bool, bool, dict]:
        """Plays one action: returns ``(observation, reward, terminated, truncated, info)``.

        The reward is 0 until the episode ends: ``terminated`` after ``finish``,
        ``truncated`` when the step that spends the call budget has been played
        (the episode is then finished and judged). The last step's ``info`` has
        the verdict, every check, the fault ledger and the reward's terms.
        """
        call = normalize_action(action, answer_schema=self.answer_schema)
        return await self.play(call)

    async def play(self, call: _Call) -> Tuple[dict, float, bool, bool, dict]:
        """Plays an action already checked by :func:`normalize_action`."""
        if self.done or self.episode is None:
            raise EpisodeOver("the episode is over (or never started): call reset()")
        if call.tool == FINISH:
            return await self._finish(call.answer, truncated=False, answer_json=call.answer_json)
        result = await self.client.call_tool(
            self.episode.episode_id, call.tool, call.arguments_json, idempotency_key=call.idempotency_key, waited_ms=call.waited_ms
        )
        self.steps += 1
        observation = {"text": result.text, "is_error": result.is_error, "kind": result.kind}
        info: dict = {
            "call_index": result.call_index,
            "kind": result.kind,
            "code": result.code,
            "reason": result.reason,
            "retry_after_ms": result.retry_after_ms,
            "retry_after_virtual_ms": result.retry_after_virtual_ms,
        }
        if self.detailed:
            trajectory = await self.client.trajectory(self.episode.episode_id)
            record = trajectory.calls[-1] if len(trajectory.calls) > self._recorded else None  # None: refused before the episode
            self._recorded = len(trajectory.calls)
            info.update(fault=_fault(record) if record is not None else None, ledger=ledger(trajectory))
        if self.steps >= self.episode.max_calls:
            _, reward, _, _, finished = await self._finish(None, truncated=True)
            info.update(finished)
            return observation, reward, False, True, info
        return observation, 0.0, False, False, info

    async def _finish(self, answer: Optional[str], *, truncated: bool, answer_json: Optional[str] = None) -> Tuple[dict, float, bool, bool, dict]:
        episode_id = self.episode_id
        self.done = True
        self.verdict = await self.client.finish_episode(episode_id, answer=answer, answer_json=answer_json)
        trajectory = await self.client.trajectory(episode_id)
        info = reward_info(self.reward, self.verdict, trajectory)
        info.update(episode_id=episode_id, trajectory_calls=len(trajectory.calls))
        observation = {"text": self.verdict.state_diff_text, "is_error": False, "kind": "verdict"}
        return observation, sum(info["reward_terms"].values()), not truncated, truncated, info

    async def branch(self, n: int, *, at: Optional[int] = None) -> List["AsyncToolEnv"]:
        """``n`` independent continuations of this episode after its first ``at`` calls
        (default: all its calls so far), each a new live episode (ForkEpisode) with the
        same state, fault-schedule position and clock, ready for steps. Works on a
        finished episode too (branch from any step of a recorded one)."""
        if n < 1:
            raise ValueError(f"branch: n must be at least 1, not {n}")
        episode_id = self.episode_id
        if at is None or not 0 <= at <= self.steps:
            # The steps taken bound the calls recorded (a call the server refused before the episode is not recorded).
            recorded = len((await self.client.trajectory(episode_id)).calls)
            at = recorded if at is None else at
            if not 0 <= at <= recorded:
                raise ValueError(f"branch: at must be within 0..{recorded} (the episode's recorded calls), not {at}")
        time_scale = self.episode.time_scale if self.episode is not None else None
        episodes = await asyncio.gather(*(self.client.fork_episode(episode_id, at, delivery=self._delivery, time_scale=time_scale) for _ in range(n)))
        branches = []
        for episode in episodes:
            branch = AsyncToolEnv(self.client, reward=self.reward, detailed=self.detailed)
            branch._delivery = self._delivery
            branch._start(episode, at)
            branches.append(branch)
        return branches

    async def trajectory(self) -> pb.Trajectory:
        """The current episode's trajectory, as the server recorded it."""
        return await self.client.trajectory(self.episode_id)

    async def close(self) -> None:
        """Closes the client (shared clients too: close those once, yourself, instead)."""
        await self.client.close()
