"""Tools for chat templates and a model's reply read as calls, by the Rust agents' cases."""

import json
from pathlib import Path

import pytest

from toolenv import ToolEnv
from toolenv.calls import chat_tools, parse_reply, reply_actions

CASES = Path(__file__).resolve().parents[2] / "examples" / "python" / "llm_call_cases.json"
SHARED = json.loads(CASES.read_text())


@pytest.mark.parametrize("case", SHARED["cases"], ids=lambda case: json.dumps(case["message"])[:60])
def test_the_cases_the_rust_agents_pass(case):
    got = parse_reply(case["message"], SHARED["tools"])
    expect = case["expect"]
    if "calls" in expect:
        assert got[0] == "calls" and got[1] == expect["calls"] and [[n, a] for _, n, a in got[2]] == expect["list"]
    elif "final" in expect:
        assert got == ("final", expect["final"])
    else:
        assert got[0] == "malformed" and got[1]


def test_the_tools_are_the_list_chat_templates_take(client):
    observation, _ = ToolEnv(client).reset("travel/cheapest-flight/001", seed=0)
    tools = chat_tools(observation["tools"])
    assert [t["type"] for t in tools] == ["function"] * (len(observation["tools"]) + 1)
    assert [t["function"]["name"] for t in tools] == [t["name"] for t in observation["tools"]] + ["finish"]
    assert tools[0]["function"]["parameters"] == observation["tools"][0]["parameters"]
    task = client.get_task("travel/cheapest-flight/001")
    assert chat_tools(task.tools, finish=False) == tools[:-1], "from ToolSpec messages too"
    json.dumps(tools)  # plain JSON


def test_a_reply_becomes_actions():
    names = ["search_flights", "finish"]
    reply = parse_reply({"content": '```json\n{"name": "search_flights", "arguments": {"origin": "LON"}}\n```'}, names)
    assert reply_actions(reply) == [{"tool": "search_flights", "arguments": {"origin": "LON"}}]
    assert reply_actions(parse_reply({"content": "Booked."}, names)) == [{"tool": "finish", "arguments": {"answer": "Booked."}}]
    assert reply_actions(parse_reply({"content": "Action: fly\nAction Input: {}"}, names)) is None


def test_a_models_typed_finish_call_becomes_the_envs_finish(client):
    from test_typed_answers import CHECK, REFUSE, RIGHT

    from toolenv.env import finish_tool

    env = ToolEnv(client)
    observation, _ = env.reset(REFUSE, seed=0)
    tools = chat_tools(observation["tools"], finish=False) + [finish_tool(observation["answer_schema"])]
    names = [t["function"]["name"] for t in tools]
    calls = [(CHECK[0], CHECK[1]), ("finish", {"answer": "Taken.", **RIGHT})]
    message = {"tool_calls": [{"id": f"c{i}", "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]}
    actions = reply_actions(parse_reply(message, names))
    assert [a["tool"] for a in actions] == ["check_availability", "finish"]
    for action in actions:
        _, reward, _, _, info = env.step(action)
    assert (reward, info["answer_json"]) == (1.0, RIGHT)
