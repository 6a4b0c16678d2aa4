"""Vector environments: N episodes stepped at once, by Gymnasium's vector conventions.

    env = VectorEnv("127.0.0.1:50051", 64, ["travel/cheapest-flight/001", "scheduling/simple-booking/001"])
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(actions)  # one action per episode

:class:`AsyncVectorEnv` is the asyncio one (``await env.step(actions)``): its
N episodes share one ``grpc.aio`` channel and are stepped concurrently from
one thread, one CallTool each per step. :class:`VectorEnv` is the same for
synchronous code: it runs an :class:`AsyncVectorEnv` on an event loop of its
own, in a background thread.

What a step returns, as ``gymnasium.vector.VectorEnv.step`` does, batched
over the N episodes: ``observations`` (a list: observations are text and
JSON, which do not stack into arrays; each is the single environment's
observation dict), ``rewards`` (list of float), ``terminations`` and
``truncations`` (lists of bool) and ``infos``, a dict whose every key maps
to a list of N values with a boolean mask under ``"_" + key`` saying which
episodes have that key this step (Gymnasium's vector info format). Each
episode's info is that of :class:`toolenv.aio.AsyncToolEnv`; the last step of
an episode carries its verdict, every check, the fault ledger and the
reward's terms (:mod:`toolenv.rewards`).

Which episode a slot plays: ``tasks`` is a list of task ids or a function
``(slot, episode_number, seed) -> EpisodeSpec``. With a list, slot ``i``'s
``k``-th episode (k = 0, 1, … since the last seeded reset) is task
``tasks[i % len(tasks)]``, seed ``seed + i``, trial ``k``. A slot's episodes
therefore depend only on (slot, k, seed) and the actions sent, never on N
or on the other slots: the same (task, seed, trial) with the same actions
gives the same trajectory alone or in a batch of 256.

Autoreset modes (Gymnasium's ``AutoresetMode``):

- ``"next_step"`` (the default): the step after an episode ends resets that
  slot: its action is ignored, its observation is the new episode's first
  one, its reward 0, not terminated nor truncated.
- ``"same_step"``: a slot is reset in the step its episode ends; the
  returned observation is the new episode's first one, and the ending
  episode's observation and info are in ``infos["final_obs"]`` and
  ``infos["final_info"]`` (masked).
- ``"disabled"``: ended slots stay ended until ``reset(options={"reset_mask":
  [...]})``; stepping one raises :class:`toolenv.aio.EpisodeOver`.

Bad actions: a tool the episode does not have or malformed arguments come
back as that slot's observation (an error status) and spend a step; an
action that is no tool call at all raises :class:`ValueError` naming the
slot, and a step of an ended slot (autoreset disabled) raises
:class:`toolenv.aio.EpisodeOver`, both before anything is sent; every call
has a deadline (``timeout``), so no batch hangs. A server error outside a
tool call (an episode expired before finish) raises :class:`BatchError`
once every other slot's step is done.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from toolenv.aio import Action, AsyncClient, AsyncToolEnv, EpisodeOver, normalize_action
from toolenv.client import pb
from toolenv.rewards import Reward

__all__ = ["AUTORESET_MODES", "AsyncVectorEnv", "BatchError", "EpisodeSpec", "VectorEnv", "cycle"]

AUTORESET_MODES = ("next_step", "same_step", "disabled")

T = TypeVar("T")


@dataclass(frozen=True)
class EpisodeSpec:
    """What an episode plays: the arguments of :meth:`toolenv.aio.AsyncToolEnv.reset`."""

    task: str
    seed: int = 0
    trial: int = 0
    epsilon: float = 0.0
    faults: Union[str, pb.FaultProfile, None] = None
    only: Sequence[str] = ()
    delivery: Union[str, int, None] = None
    time_scale: Optional[float] = 0.0


#: ``(slot, episode_number, seed) -> EpisodeSpec``: which episode a slot plays next.
Schedule = Callable[[int, int, int], EpisodeSpec]


def cycle(
    tasks: Sequence[str], *, epsilon: float = 0.0, faults: Union[str, pb.FaultProfile, None] = None, delivery: Union[str, int, None] = None
) -> Schedule:
    """The default schedule: slot ``i``'s ``k``-th episode is ``tasks[i % len(tasks)]``, seed ``seed + i``, trial ``k``."""
    tasks = list(tasks)
    if not tasks:
        raise ValueError("a vector environment needs at least one task")

    def schedule(slot: int, episode_number: int, seed: int) -> EpisodeSpec:
        return EpisodeSpec(tasks[slot % len(tasks)], seed=seed + slot, trial=episode_number, epsilon=epsilon, faults=faults, delivery=delivery)

    return schedule


class BatchError(RuntimeError):
    """Some slots' steps failed outside their tool call; ``errors`` maps each slot to its exception."""

    def __init__(self, errors: Dict[int, BaseException]):
        self.errors = errors
        detail = "; ".join(f"slot {slot}: {error!r}" for slot, error in sorted(errors.items())[:4])
        super().__init__(f"{len(errors)} slot(s) failed: {detail}")


@dataclass
class _Slot:
    env: AsyncToolEnv
    episode_number: int = -1
    pending_reset: bool = False


def batch_infos(infos: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Per-episode infos in Gymnasium's vector format: ``key -> [value or None] * N`` and ``"_key" -> mask``."""
    batched: Dict[str, Any] = {}
    n = len(infos)
    for i, info in enumerate(infos):
        for key, value in info.items():
            if key not in batched:
                batched[key] = [None] * n
                batched["_" + key] = [False] * n
            batched[key][i] = value
            batched["_" + key][i] = True
    return batched


class AsyncVectorEnv:
    """N episodes stepped at once with coroutines (see the module's documentation).

    ``server``: a ``host:port`` address or an :class:`~toolenv.aio.AsyncClient`
    (then shared, not closed by :meth:`close`); ``tasks``: task ids or a
    schedule; ``reward``: how an episode's end is scored; ``timeout``: seconds
    allowed each call; ``streaming``: send each step's calls batched over one
    ``CallTools`` stream (:mod:`toolenv.stream`). Create it inside the event
    loop that steps it.
    """

    def __init__(
        self,
        server: Union[str, AsyncClient],
        num_envs: int,
        tasks: Union[Sequence[str], Schedule],
        *,
        reward: Reward = Reward(),
        autoreset_mode: str = "next_step",
        detailed: bool = False,
        token: Optional[str] = None,
        timeout: Optional[float] = 30.0,
        streaming: bool = False,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        if autoreset_mode not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {AUTORESET_MODES}, not {autoreset_mode!r}")
        self._owns_client = not isinstance(server, AsyncClient)
        self.client = server if isinstance(server, AsyncClient) else AsyncClient(server, token=token, timeout=timeout, streaming=streaming)
        self.schedule: Optional[Schedule] = tasks if callable(tasks) else cycle(tasks)
        self.num_envs = num_envs
        self.autoreset_mode = autoreset_mode
        self.reward = reward
        self.seed = 0
        self._slots = [_Slot(AsyncToolEnv(self.client, reward=reward, detailed=detailed)) for _ in range(num_envs)]

    @classmethod
    def of(cls, client: AsyncClient, envs: Sequence[AsyncToolEnv], *, autoreset_mode: str = "disabled") -> "AsyncVectorEnv":
        """A vector environment over episodes already started (e.g. branches): it has no schedule, so
        its slots cannot be reset; autoreset is disabled."""
        if autoreset_mode != "disabled":
            raise ValueError("a vector environment of given episodes has no schedule to reset them from: autoreset_mode must be 'disabled'")
        vector = cls(client, len(envs), ["-"], autoreset_mode="disabled", reward=envs[0].reward if envs else Reward())
        vector.schedule = None
        vector._slots = [_Slot(env, episode_number=0) for env in envs]
        return vector

    @property
    def envs(self) -> List[AsyncToolEnv]:
        """The single environments, one per slot (their ``episode_id``, ``trajectory()``, …)."""
        return [slot.env for slot in self._slots]

    async def reset(
        self, *, seed: Optional[int] = None, options: Optional[Mapping[str, Any]] = None
    ) -> Tuple[List[dict], Dict[str, Any]]:
        """Starts the next episode of every slot (or of those ``options["reset_mask"]`` marks).

        ``seed`` is passed to the schedule (by the default one, slot ``i`` plays
        seed ``seed + i``) and restarts every slot's episode count. Returns the
        observations (None for slots left alone) and the infos.
        """
        mask = list((options or {}).get("reset_mask") or [True] * self.num_envs)
        if len(mask) != self.num_envs:
            raise ValueError(f"reset_mask has {len(mask)} entries for {self.num_envs} episodes")
        unknown = set(options or {}) - {"reset_mask"}
        if unknown:
            raise ValueError(f"reset: unknown option(s) {sorted(unknown)} (known: reset_mask)")
        if seed is not None:
            self.seed = int(seed)
            for slot in self._slots:
                slot.episode_number = -1
        chosen = [i for i in range(self.num_envs) if mask[i]]
        outcomes = await self._gather({i: self._reset_slot(i) for i in chosen})
        observations: List[Optional[dict]] = [None] * self.num_envs
        infos: List[dict] = [{} for _ in range(self.num_envs)]
        for i, (observation, info) in outcomes.items():
            observations[i], infos[i] = observation, info
        return observations, batch_infos(infos)  # type: ignore[return-value]

    async def _reset_slot(self, i: int) -> Tuple[dict, dict]:
        if self.schedule is None:
            raise EpisodeOver(f"slot {i}: a vector environment of given episodes cannot be reset")
        slot = self._slots[i]
        slot.episode_number += 1
        spec = self.schedule(i, slot.episode_number, self.seed)
        slot.pending_reset = False
        observation, info = await slot.env.reset(
            spec.task,
            seed=spec.seed,
            epsilon=spec.epsilon,
            faults=spec.faults,
            trial=spec.trial,
            only=spec.only,
            delivery=spec.delivery,
            time_scale=spec.time_scale,
        )
        info.update(task=spec.task, seed=spec.seed, trial=spec.trial)
        return observation, info

    async def step(self, actions: Sequence[Optional[Action]]) -> Tuple[List[dict], List[float], List[bool], List[bool], Dict[str, Any]]:
        """Plays one action per slot, all at once; returns ``(observations, rewards,
        terminations, truncations, infos)``. A slot waiting for its autoreset
        (``"next_step"``) takes None (or any action: it is ignored)."""
        if len(actions) != self.num_envs:
            raise ValueError(f"step takes one action per episode: {len(actions)} actions for {self.num_envs} episodes")
        calls: Dict[int, Any] = {}
        over = []
        for i, action in enumerate(actions):
            slot = self._slots[i]
            if slot.pending_reset:
                continue
            if slot.env.done:
                over.append(i)
                continue
            try:
                calls[i] = normalize_action(action, answer_schema=slot.env.answer_schema)  # type: ignore[arg-type]
            except ValueError as error:
                raise ValueError(f"slot {i}: {error}") from None
        if over:
            raise EpisodeOver(f"slot(s) {over[:8]} have ended: reset them (options={{'reset_mask': ...}}) before stepping")
        outcomes = await self._gather({i: self._step_slot(i, calls.get(i)) for i in range(self.num_envs)})
        observations, rewards, terminations, truncations, infos = [], [], [], [], []
        for i in range(self.num_envs):
            observation, reward, terminated, truncated, info = outcomes[i]
            observations.append(observation)
            rewards.append(reward)
            terminations.append(terminated)
            truncations.append(truncated)
            infos.append(info)
        return observations, rewards, terminations, truncations, batch_infos(infos)

    async def _step_slot(self, i: int, call: Any) -> Tuple[dict, float, bool, bool, dict]:
        slot = self._slots[i]
        if slot.pending_reset:
            observation, info = await self._reset_slot(i)
            return observation, 0.0, False, False, info
        observation, reward, terminated, truncated, info = await slot.env.play(call)
        if terminated or truncated:
            if self.autoreset_mode == "next_step":
                slot.pending_reset = True
            elif self.autoreset_mode == "same_step":
                final_observation, final_info = observation, info
                observation, info = await self._reset_slot(i)
                info.update(final_obs=final_observation, final_info=final_info)
        return observation, reward, terminated, truncated, info

    async def _gather(self, coroutines: Mapping[int, Coroutine[Any, Any, T]]) -> Dict[int, T]:
        slots = list(coroutines)
        results = await asyncio.gather(*coroutines.values(), return_exceptions=True)
        errors = {slot: result for slot, result in zip(slots, results) if isinstance(result, BaseException)}
        if errors:
            raise BatchError(errors)
        return dict(zip(slots, results))  # type: ignore[arg-type]

    async def branch(self, slot: int, n: int, *, at: Optional[int] = None) -> "AsyncVectorEnv":
        """A vector environment of ``n`` continuations of slot ``slot``'s episode after its first
        ``at`` calls (default: all so far), sharing this one's channel (autoreset disabled):
        a GRPO group, or one level of a tree search."""
        branches = await self._slots[slot].env.branch(n, at=at)
        return AsyncVectorEnv.of(self.client, branches)

    async def close(self) -> None:
        """Closes the channel, if this environment opened it."""
        if self._owns_client:
            await self.client.close()


class VectorEnv:
    """:class:`AsyncVectorEnv` for synchronous code: the same arguments and methods, blocking.

    It runs its own event loop in a daemon thread, so it works whether or not
    the caller's thread runs one (a notebook, a trainer's loop).
    """

    def __init__(self, server: str, num_envs: int, tasks: Union[Sequence[str], Schedule], **settings: Any):
        self._loop = asyncio.new_event_loop()
        self._thread: Optional[threading.Thread] = threading.Thread(target=self._loop.run_forever, name="toolenv-vector", daemon=True)
        self._thread.start()

        async def make() -> AsyncVectorEnv:
            return AsyncVectorEnv(server, num_envs, tasks, **settings)

        try:
            self.env = self._run(make())
        except BaseException:
            self._stop()
            raise

    @classmethod
    def _sharing(cls, parent: "VectorEnv", env: AsyncVectorEnv) -> "VectorEnv":
        vector = cls.__new__(cls)
        vector._loop, vector._thread, vector.env = parent._loop, None, env
        return vector

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    @property
    def num_envs(self) -> int:
        """How many episodes are stepped at once."""
        return self.env.num_envs

    @property
    def envs(self) -> List[AsyncToolEnv]:
        """The single (asyncio) environments, one per slot; read their ``episode_id`` and ``steps``."""
        return self.env.envs

    def reset(self, *, seed: Optional[int] = None, options: Optional[Mapping[str, Any]] = None) -> Tuple[List[dict], Dict[str, Any]]:
        """See :meth:`AsyncVectorEnv.reset`."""
        return self._run(self.env.reset(seed=seed, options=options))

    def step(self, actions: Sequence[Optional[Action]]) -> Tuple[List[dict], List[float], List[bool], List[bool], Dict[str, Any]]:
        """See :meth:`AsyncVectorEnv.step`."""
        return self._run(self.env.step(actions))

    def branch(self, slot: int, n: int, *, at: Optional[int] = None) -> "VectorEnv":
        """See :meth:`AsyncVectorEnv.branch`; the branches share this environment's loop and channel."""
        return VectorEnv._sharing(self, self._run(self.env.branch(slot, n, at=at)))

    def trajectory(self, slot: int) -> pb.Trajectory:
        """Slot ``slot``'s current episode's trajectory."""
        return self._run(self._slot_env(slot).trajectory())

    def _slot_env(self, slot: int) -> AsyncToolEnv:
        return self.env.envs[slot]

    def close(self) -> None:
        """Closes the channel and stops the loop (a branch's close leaves its parent's loop running)."""
        if self._thread is None:
            return
        try:
            self._run(self.env.close())
        finally:
            self._stop()

    def _stop(self) -> None:
        if self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None
            self._loop.close()

    def __enter__(self) -> "VectorEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
