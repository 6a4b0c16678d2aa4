"""Plays one episode's calls through the Python env and through `toolenv mcp`
(stdio and streamable HTTP, with the official MCP client), for the
cross-surface test (client/tests/python.rs), which plays the same calls over
gRPC and compares the trajectories byte for byte.

Reads {"server", "binary", "task", "seed", "epsilon", "faults", "in_band",
"calls": [{"tool", "arguments", "waited_ms"?}]} on stdin; prints
{"env": episode id, "mcp_stdio": ..., "mcp_http": ...}.
"""

import json
import sys

import anyio
from test_mcp import http_session, stdio_session, text

from toolenv import ToolEnv


def play_env(spec):
    env = ToolEnv(spec["server"])
    env.reset(spec["task"], seed=spec["seed"], epsilon=spec["epsilon"], faults=spec["faults"], delivery="in_band" if spec["in_band"] else "status")
    for call in spec["calls"]:
        env.step({"tool": call["tool"], "arguments": call["arguments"], "waited_ms": call.get("waited_ms")})
    env.step({"tool": "finish"})
    return env.episode_id


async def play_mcp(spec, session_of):
    flags = [spec["task"], "--seed", str(spec["seed"]), "--epsilon", str(spec["epsilon"]), "--faults", spec["faults"]]
    flags += ["--in-band"] if spec["in_band"] else []
    async with session_of(spec["binary"], spec["server"], *flags) as (session, _):
        for call in spec["calls"]:
            meta = {"toolenv/waited_ms": call["waited_ms"]} if "waited_ms" in call else None
            await session.call_tool(call["tool"], call["arguments"], meta=meta)
        return json.loads(text(await session.call_tool("finish", {})))["episode_id"]


def main():
    spec = json.load(sys.stdin)
    ids = {
        "env": play_env(spec),
        "mcp_stdio": anyio.run(play_mcp, spec, stdio_session),
        "mcp_http": anyio.run(play_mcp, spec, http_session),
    }
    print(json.dumps(ids))


if __name__ == "__main__":
    main()
