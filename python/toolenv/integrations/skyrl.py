"""toolenv episodes as SkyRL-gym environments (``skyrl_gym.envs.base_text_env.BaseTextEnv``).

SkyRL's generator makes one environment per rollout with
``skyrl_gym.make(env_class, env_config=..., extras=row)``, calls
``init(prompt)`` once, then ``step(model_reply)`` until ``done``; each step
returns the messages to append to the conversation, a reward and ``done``.

    from toolenv.integrations.skyrl import register
    register()  # as "toolenv"
    env = skyrl_gym.make("toolenv", env_config={"server": "127.0.0.1:50051"},
                         extras={"task": "travel/cheapest-flight/001", "seed": 0})
    prompt, metadata = env.init([])  # system (tools, how to call them) + the task's description
    out = env.step('{"name": "search_flights", "arguments": {...}}')

``extras`` (a dataset row's fields) or ``env_config`` give: ``server``
(``host:port``; else ``$TOOLENV_SERVER``), ``task``, ``seed``, ``trial``,
``epsilon``, ``faults``, ``delivery``, ``max_turns`` (model replies allowed;
default: the episode's call budget), ``reward`` (the arguments of
:class:`toolenv.rewards.Reward`, e.g. ``{"mode": "partial", "collateral":
0.5}``) and ``role`` (of the observation messages: "user" by default, or
"tool").

A reply is read by :func:`toolenv.calls.parse_reply` (the built-in agents'
rules); its calls are played in order, each result becoming one message. A
reply with no call (a final answer) or a ``finish`` call ends the episode.
``finish``'s parameters are a prose ``answer`` and, for a task with a typed
answer (the episode's ``answer_schema_json``), that answer's fields, which
the system message names: the fields the model fills are sent as the typed
answer (``answer_json``, judged field by field instead of the prose). Then
the reward is computed from the verdict, and ``metadata`` has every check,
the fault ledger and the reward's terms. A malformed reply gets the reason
back as an observation (counted in ``protocol_errors``), never taken as done.
The episode also ends, judged, when its call budget or ``max_turns`` is
spent.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Tuple

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import register as _register
from skyrl_gym.envs.registration import registry

from toolenv.calls import chat_tools, parse_reply
from toolenv.client import Client, answer_schema, pb
from toolenv.env import answer_fields, finish_answer, finish_tool
from toolenv.rewards import Reward, reward_info

__all__ = ["ToolEnvSkyRL", "register", "SETTINGS"]

#: What ``extras`` or ``env_config`` may set.
SETTINGS = ("server", "task", "seed", "trial", "epsilon", "faults", "delivery", "max_turns", "reward", "role", "time_scale")

_clients: Dict[str, Client] = {}
_clients_lock = threading.Lock()


def _client(server: str) -> Client:
    """One channel per server for every environment of the process (SkyRL makes one per rollout)."""
    with _clients_lock:
        if server not in _clients:
            _clients[server] = Client(server)
        return _clients[server]


def system_prompt(tools: List[dict], typed: Optional[List[str]] = None) -> str:
    """Tells the model its tools and how to call them (the forms :func:`toolenv.calls.parse_reply` reads),
    and ``typed``, the fields of the task's typed answer, which finish takes beside the answer."""
    finish = "When the task is done, call finish (with your answer if the task asks a question)."
    if typed:
        finish = (
            "When the task is done, call finish with your answer and every field of the typed answer "
            f"({', '.join(typed)}) filled with its exact value, as finish's parameters say."
        )
    return (
        "You solve the user's task by calling tools. Call a tool by replying with a JSON object "
        '{"name": <tool>, "arguments": {...}} (several in a list, in order), optionally in a ```json block. '
        + finish
        + "\nTools:\n"
        + json.dumps(tools, ensure_ascii=False)
    )


class ToolEnvSkyRL(BaseTextEnv):
    """One toolenv episode as a SkyRL-gym text environment (see the module's documentation)."""

    def __init__(self, env_config: Any = None, extras: Optional[Mapping[str, Any]] = None):
        super().__init__()
        settings: Dict[str, Any] = {}
        for source in (env_config or {}, extras or {}):
            for name in SETTINGS:
                if name in source and source[name] is not None:
                    settings[name] = source[name]
        server = settings.get("server") or os.environ.get("TOOLENV_SERVER")
        if not server:
            raise ValueError("toolenv: no server: set 'server' in env_config or extras, or $TOOLENV_SERVER")
        if not settings.get("task"):
            raise ValueError("toolenv: which task? set 'task' (e.g. 'travel/cheapest-flight/001') in extras")
        self.settings = settings
        self.client = _client(str(server))
        self.reward = Reward(**dict(settings.get("reward") or {}))
        self.role = str(settings.get("role", "user"))
        self.episode: Optional[pb.Episode] = None
        self.answer_schema: Optional[dict] = None
        self.tool_names: List[str] = []
        self.calls = 0
        self.protocol_errors = 0
        self.done = False
        self.info: Dict[str, Any] = {}

    def init(self, prompt: Optional[List[Dict[str, str]]] = None) -> Tuple[List[Dict[str, str]], Dict[str, Any]]:
        """Starts the episode; returns ``prompt`` followed by a system message (the tools, how to call
        them) and a user message (the task's description, as perturbed by ε), and metadata with the
        episode id and the tools as chat templates take them."""
        s = self.settings
        self.episode = self.client.create_episode(
            s["task"],
            seed=int(s.get("seed", 0)),
            trial=int(s.get("trial", 0)),
            epsilon=float(s.get("epsilon", 0.0)),
            faults=s.get("faults"),
            delivery=s.get("delivery"),
            time_scale=s.get("time_scale", 0.0),
        )
        self.max_turns = int(s.get("max_turns") or self.episode.max_calls)
        self.answer_schema = answer_schema(self.episode)
        tools = chat_tools(self.episode.tools, finish=False) + [finish_tool(self.answer_schema)]
        self.tool_names = [tool["function"]["name"] for tool in tools]
        messages = list(prompt or []) + [
            {"role": "system", "content": system_prompt(tools, answer_fields(self.answer_schema))},
            {"role": "user", "content": self.episode.description},
        ]
        return messages, {"episode_id": self.episode.episode_id, "tools": tools, "answer_schema": self.answer_schema}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Reads the model's reply, plays its calls, and returns their results as messages."""
        if self.episode is None or self.done:
            raise RuntimeError("toolenv: the episode is over (or init() was not called)")
        self.turns += 1
        reply = parse_reply({"role": "assistant", "content": action}, self.tool_names)
        observations: List[Dict[str, str]] = []
        if reply[0] == "malformed":
            self.protocol_errors += 1
            observations.append({"role": self.role, "content": f"Your reply could not be read as a tool call: {reply[1]}"})
        elif reply[0] == "final":
            return self._end(reply[1] or None, observations)
        else:
            for _, name, arguments in reply[2]:
                if name == "finish":
                    answer, typed = finish_answer(arguments, self.answer_schema, strict=False)
                    return self._end(answer, observations, typed)
                result = self.client.call_tool(self.episode.episode_id, name, arguments)
                self.calls += 1
                observations.append({"role": self.role, "content": f"[{name}] {result.text}"})
                if self.calls >= self.episode.max_calls:
                    return self._end(None, observations)
        if self.turns >= self.max_turns:
            return self._end(None, observations)
        return BaseTextEnvStepOutput(observations=observations, reward=0.0, done=False, metadata={"calls": self.calls})

    def _end(self, answer: Optional[str], observations: List[Dict[str, str]], typed: Optional[dict] = None) -> BaseTextEnvStepOutput:
        assert self.episode is not None
        self.done = True
        verdict = self.client.finish_episode(self.episode.episode_id, answer=answer or None, answer_json=typed)
        trajectory = self.client.trajectory(self.episode.episode_id)
        self.info = reward_info(self.reward, verdict, trajectory)
        reward = float(sum(self.info["reward_terms"].values()))
        metadata = {k: v for k, v in self.info.items() if k != "verdict"}
        metadata.update(episode_id=self.episode.episode_id, calls=self.calls, protocol_errors=self.protocol_errors, answer_json=typed)
        return BaseTextEnvStepOutput(observations=observations, reward=reward, done=True, metadata=metadata)

    def get_metrics(self) -> Dict[str, Any]:
        """Per-episode figures SkyRL averages over a batch."""
        return {
            "turns": self.turns,
            "calls": self.calls,
            "protocol_errors": self.protocol_errors,
            "passed": float(bool(self.info.get("passed"))),
            "faults_met": len(self.info.get("ledger", [])),
        }

    def close(self) -> None:
        """Nothing to close: the channel is shared by the process's environments."""


def register(env_id: str = "toolenv") -> None:
    """Registers :class:`ToolEnvSkyRL` with SkyRL-gym as ``env_id`` (once; again is a no-op)."""
    if env_id not in registry:
        _register(id=env_id, entry_point="toolenv.integrations.skyrl:ToolEnvSkyRL")
