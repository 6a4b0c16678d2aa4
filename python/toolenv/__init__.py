"""toolenv for Python: a typed gRPC client, a Gymnasium-style environment and
a worker for hosted runs, over a toolenv server.

    from toolenv import Client, ToolEnv

    env = ToolEnv("127.0.0.1:50051")
    observation, info = env.reset("scheduling/simple-booking/001", seed=0, faults="0.2")
    observation, reward, terminated, truncated, info = env.step({"tool": "check_calendar", "arguments": {...}})
    ...
    observation, reward, terminated, truncated, info = env.step({"tool": "finish"})  # reward: the verdict

For training (RL): :mod:`toolenv.aio` (asyncio client and env, branching),
:mod:`toolenv.vector` (N episodes stepped at once, Gymnasium's vector
conventions), :mod:`toolenv.rewards` (verdict, partial credit, penalties),
:mod:`toolenv.calls` (tools for chat templates, a model's reply read as
calls), :mod:`toolenv.stream` (calls batched over the CallTools stream) and
:mod:`toolenv.integrations` (SkyRL-gym).

The gRPC stubs (``toolenv.pb``) are generated from the repository's proto/
when the package is built.
"""

from toolenv.client import CallResult, Client, pb
from toolenv.env import FINISH, ToolEnv
from toolenv.tools import Tools

__all__ = ["CallResult", "Client", "FINISH", "ToolEnv", "Tools", "pb"]
__version__ = "0.1.0"
