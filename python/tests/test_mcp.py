"""`toolenv mcp` with the official MCP Python SDK's client (the `mcp` package):
over stdio and over streamable HTTP, against a real server."""

import contextlib
import json
import subprocess

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from toolenv import Client

CHEAPEST = "travel/cheapest-flight/001"
SEARCH = {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}
REFERENCE = [
    ("search_flights", SEARCH),
    ("get_traveler_profile", {"name": "Bob"}),
    ("hold_flight", {"flight_id": "AA-500"}),
    ("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}),
]


@contextlib.asynccontextmanager
async def stdio_session(binary, server, *args):
    parameters = StdioServerParameters(command=binary, args=["mcp", "--url", f"http://{server}", *args], env={"RUST_LOG": "warn"})
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            yield session, await session.initialize()


@contextlib.asynccontextmanager
async def http_session(binary, server, *args):
    process = subprocess.Popen(
        [binary, "mcp", "--url", f"http://{server}", "--http", "127.0.0.1:0", *args], stdout=subprocess.PIPE, text=True
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        async with streamable_http_client(url) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                yield session, await session.initialize()
    finally:
        process.terminate()
        process.wait(timeout=10)


SESSIONS = {"stdio": stdio_session, "http": http_session}


def text(result):
    assert len(result.content) == 1 and result.content[0].type == "text", result
    return result.content[0].text


def run(coroutine):
    return anyio.run(coroutine)


@pytest.mark.parametrize("transport", SESSIONS)
def test_an_episode_over_mcp_lists_the_tools_unchanged_and_finishes_with_the_verdict(binary, server, transport):
    task = Client(server).get_task(CHEAPEST)

    async def play():
        async with SESSIONS[transport](binary, server, CHEAPEST, "--seed", "0") as (session, init):
            assert task.summary.description in init.instructions
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == [t.name for t in task.tools] + ["finish"]
            for tool, spec in zip(tools, task.tools):
                assert tool.input_schema == json.loads(spec.parameters_json_schema), "schemas unchanged"
                assert tool.annotations.read_only_hint == (not spec.mutates_state)
            prompt = await session.get_prompt("task")
            assert task.summary.description in prompt.messages[0].content.text
            for name, arguments in REFERENCE:
                result = await session.call_tool(name, arguments)
                assert not result.is_error, text(result)
            finished = json.loads(text(await session.call_tool("finish", {})))
            assert finished["verdict"]["passed"] is True and finished["task_id"] == CHEAPEST
            # The episode is over: the server refuses further calls, and the client reads why.
            late = await session.call_tool("search_flights", SEARCH)
            assert late.is_error and json.loads(text(late))["error"]["code"] == "FAILED_PRECONDITION"
            return finished["episode_id"]

    episode_id = run(play)
    trajectory = Client(server).trajectory(episode_id)
    assert [c.tool_name for c in trajectory.calls] == [name for name, _ in REFERENCE]
    assert trajectory.verdict.passed, "the finish was recorded like any other"


@pytest.mark.parametrize("transport", SESSIONS)
def test_faults_reach_the_client_as_tool_errors_or_in_band_as_the_delivery_says(binary, server, transport):
    async def play(*flags):
        async with SESSIONS[transport](binary, server, CHEAPEST, "--faults", "0.3", "--only", "ConnectionReset", *flags) as (session, _):
            results = [await session.call_tool("search_flights", SEARCH) for _ in range(12)]
            finished = json.loads(text(await session.call_tool("finish", {})))
            return results, finished

    results, finished = run(play)
    faulted = [r for r in results if r.is_error]
    assert faulted, "a 27.5 % profile of resets meets some of 12 calls"
    assert all(json.loads(text(r))["error"]["code"] == "UNAVAILABLE" for r in faulted)
    assert finished["verdict"]["fault_stats"]["injected"] == len(faulted)

    results, finished = run(lambda: play("--in-band"))
    assert not any(r.is_error for r in results), "in-band faults are text in OK results"
    in_band = [r for r in results if "error" in json.loads(text(r))]
    assert len(in_band) == len(faulted), "the same seed meets the same faults"
    assert all(json.loads(text(r))["error"]["reason"] for r in in_band)


def test_rate_limit_waits_are_declared_in_meta(binary, server):
    async def play():
        async with stdio_session(binary, server, CHEAPEST, "--faults", "rate-limit-only") as (session, _):
            for _ in range(12):
                result = await session.call_tool("search_flights", SEARCH)
                error = json.loads(text(result)).get("error") if result.is_error else None
                if error and error.get("reason") == "RATE_LIMIT_EXCEEDED":
                    wait = error["retry_after_virtual_ms"]
                    retried = await session.call_tool("search_flights", SEARCH, meta={"toolenv/waited_ms": wait})
                    return error, retried
            return None, None

    error, retried = run(play)
    assert error is not None, "rate-limit-only meets a soft rate limit within 12 calls"
    assert not retried.is_error or json.loads(text(retried))["error"].get("reason") != "RATE_LIMIT_EXCEEDED", text(retried)


def test_bad_calls_are_tool_errors_naming_the_field(binary, server):
    async def play():
        async with stdio_session(binary, server, CHEAPEST) as (session, _):
            bad = await session.call_tool("search_flights", {"origin": 5})
            unknown = await session.call_tool("no_such_tool", {})
            bad_finish = await session.call_tool("finish", {"answer": 3})
            return bad, unknown, bad_finish

    bad, unknown, bad_finish = run(play)
    assert bad.is_error and json.loads(text(bad))["error"]["code"] == "INVALID_ARGUMENT"
    assert unknown.is_error and json.loads(text(unknown))["error"]["code"] == "NOT_FOUND"
    assert bad_finish.is_error and "'answer' must be a string" in json.loads(text(bad_finish))["error"]["message"]


def test_a_hosted_run_is_played_episode_after_episode(binary, server):
    client = Client(server)
    run_id = client.create_run(agents=["mcp"], domain=3, level=1, time_scale=0.0).run_id  # support, level 1
    planned = client.get_run(run_id).planned
    assert planned >= 2

    async def play():
        async with stdio_session(binary, server, "--run", run_id, "--label", "mcp") as (session, init):
            assert run_id in init.instructions
            seen = []
            while True:
                finished = json.loads(text(await session.call_tool("finish", {"input_tokens": 10, "output_tokens": 2})))
                seen.append(finished["plan_index"])
                if finished["next"] is None:
                    return seen
                tools = [t.name for t in (await session.list_tools()).tools]
                assert tools == finished["next"]["tools"] and tools[-1] == "finish"

    seen = run(play)
    assert seen == list(range(planned))
    progress = client.get_run(run_id)
    assert (progress.failed, progress.complete) == (planned, True), "doing nothing fails every episode"
