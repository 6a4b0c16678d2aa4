"""The command line the agent-framework examples share: a task, the model
endpoint, and the flags passed on to `toolenv mcp`."""

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
    args = parser.parse_args()
    mcp_args = ["--faults", args.faults, "--seed", args.seed, *(["--url", args.url] if args.url else [])]
    return args, mcp_args


def main(play, description):
    """Plays the episode the command line names with `play` and prints what `finish` returned."""
    args, mcp_args = parse(description)
    finished = asyncio.run(play(args.task, args.model, args.base_url, args.toolenv, mcp_args))
    print(json.dumps(finished))
