"""toolenv for Python: a typed gRPC client, a Gymnasium-style environment and
a worker for hosted runs, over a toolenv server.

    from toolenv import Client, ToolEnv

    env = ToolEnv("127.0.0.1:50051")
    observation, info = env.reset("scheduling/simple-booking/001", seed=0, faults="0.2")
    observation, reward, terminated, truncated, info = env.step({"tool": "check_calendar", "arguments": {...}})
    ...
    observation, reward, terminated, truncated, info = env.step({"tool": "finish"})  # reward: the verdict

The gRPC stubs (``toolenv.pb``) are generated from the repository's proto/
when the package is built.
"""

from toolenv.client import CallResult, Client, pb
from toolenv.env import FINISH, ToolEnv
from toolenv.tools import Tools

__all__ = ["CallResult", "Client", "FINISH", "ToolEnv", "Tools", "pb"]
__version__ = "0.1.0"
