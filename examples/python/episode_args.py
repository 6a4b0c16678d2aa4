"""The command line the agent-framework examples share: a task, the model
endpoint, and the flags passed on to `toolenv mcp`; with --chaos, the MCP
server is `toolenv mcp` behind `toolenv chaos`, whose faults reach the
framework as MCP errors and results of the proxy's making."""

import argparse
import asyncio
import json
import os


def parse(description):
    """The examples' arguments, and the arguments for `toolenv mcp` after the task."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("task", help="a task id, e.g. travel/cheapest-flight/001")
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
    parser.add_argument("--toolenv", default="toolenv", help="the toolenv binary")
    parser.add_argument("--url", help="a toolenv server (default: toolenv mcp embeds one)")
    parser.add_argument("--faults", default="0.0", help="the fault profile, e.g. 0.2")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--chaos", metavar="PROFILE", help="serve toolenv mcp through `toolenv chaos --faults PROFILE`")
    parser.add_argument("--chaos-ledger", metavar="FILE", help="with --chaos: the proxy's ledger")
    args = parser.parse_args()
    mcp_args = ["--faults", args.faults, "--seed", args.seed, *(["--url", args.url] if args.url else [])]
    return args, server_args(args, mcp_args)


def server_args(args, mcp_args):
    """The arguments of the MCP server's command (`toolenv`): `mcp TASK …`, or that behind `chaos`."""
    mcp = ["mcp", args.task, *mcp_args]
    if not args.chaos:
        return mcp
    ledger = ["--ledger", args.chaos_ledger] if args.chaos_ledger else []
    return ["chaos", "--faults", args.chaos, "--seed", args.seed, "--time-scale", "0", *ledger, "--", args.toolenv, *mcp]


def main(play, description):
    """Plays the episode the command line names with `play` and prints what `finish` returned."""
    args, server = parse(description)
    finished = asyncio.run(play(args.task, args.model, args.base_url, args.toolenv, server))
    print(json.dumps(finished))


async def finish(call_tool, arguments, attempts=8):
    """Calls `finish` until it returns the verdict. Behind `toolenv chaos` it
    meets faults like any tool (an error result, a cut or drifted one, a
    JSON-RPC error); finishing again returns the same verdict, so it is sent
    again."""
    last = ""
    for _ in range(attempts):
        try:
            result = await call_tool("finish", arguments)
        except Exception as error:  # a JSON-RPC error: a timeout, a reset, an outage
            last = str(error)
            continue
        last = result.content[0].text if result.content else ""
        try:
            finished = json.loads(last)
        except json.JSONDecodeError:
            continue
        failed = getattr(result, "is_error", None) or getattr(result, "isError", False)  # the SDK 2.x and 1.x names
        if not failed and isinstance(finished, dict):
            # A drifted result nests the object under "data" (its keys camelCased).
            finished = finished.get("data", finished) if "verdict" not in finished else finished
            if "verdict" in finished:
                return finished
    raise RuntimeError(f"finish did not return a verdict in {attempts} attempts: {last}")
