"""Typed answers from Python against a real server: the client, the environments (sync,
asyncio, vector) and the worker's llm policy finish an answer task with the fields of its
answer schema, sent as ``answer_json``, judged field by field and kept in the trajectory."""

import asyncio
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from toolenv import FINISH, ToolEnv, pb
from toolenv.aio import AsyncToolEnv
from toolenv.client import answer_schema
from toolenv.env import finish_answer, finish_tool
from toolenv.vector import VectorEnv

#: A level-3 generated task that asks which meeting holds a slot it must not take.
SUITE = "generated:2:1"
REFUSE = "scheduling/refuse-booking/g2-3-2-0000"
CHECK = ("check_availability", {"date": "2026-06-29", "time": "16:00"})
RIGHT = {"reason": "slot_taken", "meeting_holding_slot": "Launch checklist"}
WRONG = {"reason": "slot_taken", "meeting_holding_slot": "Content review"}
PROSE = "The slot is taken, so nothing was booked."
CHEAPEST = "travel/cheapest-flight/001"
EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def answer_checks(verdict):
    return {check.name: check.passed for check in verdict.checks if "answer" in check.name}


def test_the_answer_schema_is_read_from_the_task_and_the_episode(client):
    schema = client.answer_schema(REFUSE)
    assert sorted(schema["properties"]) == ["meeting_holding_slot", "reason"]
    assert "slot_taken" in schema["properties"]["reason"]["enum"]
    episode = client.create_episode(REFUSE, seed=0, time_scale=0.0)
    assert answer_schema(episode) == schema == answer_schema(episode.answer_schema_json)
    assert client.answer_schema(CHEAPEST) is None and answer_schema("") is None


@pytest.mark.parametrize("form", ["dict", "text"])
def test_the_client_finishes_with_the_right_fields_which_pass_and_are_recorded(client, form):
    episode = client.create_episode(REFUSE, seed=0, time_scale=0.0)
    assert not client.call_tool(episode.episode_id, *CHECK).is_error
    typed = RIGHT if form == "dict" else json.dumps(RIGHT)
    verdict = client.finish_episode(episode.episode_id, answer_json=typed)
    assert verdict.passed, [(c.name, c.passed) for c in verdict.checks]
    trajectory = client.trajectory(episode.episode_id)
    assert trajectory.HasField("answer_json") and json.loads(trajectory.answer_json) == RIGHT
    assert not trajectory.HasField("answer")


def test_wrong_fields_fail_even_beside_a_right_prose_answer(client):
    episode = client.create_episode(REFUSE, seed=0, time_scale=0.0)
    client.call_tool(episode.episode_id, *CHECK)
    verdict = client.finish_episode(episode.episode_id, answer="Launch checklist holds the slot.", answer_json=WRONG)
    assert not verdict.passed and False in answer_checks(verdict).values(), "the typed answer is judged, not the prose"
    trajectory = client.trajectory(episode.episode_id)
    assert json.loads(trajectory.answer_json) == WRONG and trajectory.answer == "Launch checklist holds the slot."
    with pytest.raises(TypeError, match="answer_json"):
        client.finish_episode(episode.episode_id, answer_json=["slot_taken"])


def test_finish_arguments_split_into_the_prose_and_the_typed_answer():
    schema = {"properties": {"reason": {"type": "string"}, "amount": {"type": "number"}}, "required": ["reason"]}
    assert finish_answer({"answer": "no", "reason": "over_budget", "amount": None}, schema) == ("no", {"reason": "over_budget"})
    assert finish_answer({"summary": "done"}, schema) == ("done", None)
    assert finish_answer({"answer": {"a": 1}}, None) == ('{"a": 1}', None)
    with pytest.raises(ValueError, match="'answer', 'summary', 'reason', 'amount'"):
        finish_answer({"reason": "x", "result": "y"}, schema)
    assert finish_answer({"reason": "x", "result": "y"}, schema, strict=False) == (None, {"reason": "x"})
    tool = finish_tool(schema)["function"]
    assert tool["name"] == FINISH and list(tool["parameters"]["properties"]) == ["answer", "reason", "amount"]
    assert tool["parameters"]["required"] == ["reason"] and "Typed answer" in tool["parameters"]["properties"]["reason"]["description"]
    assert finish_tool(None)["function"]["parameters"]["properties"] == {"answer": finish_tool(schema)["function"]["parameters"]["properties"]["answer"]}


def test_the_env_offers_the_schema_and_its_finish_with_typed_fields_passes(client):
    env = ToolEnv(client)
    observation, _ = env.reset(REFUSE, seed=0)
    assert observation["answer_schema"] == client.answer_schema(REFUSE) == env.answer_schema
    finish = observation["finish"]
    assert finish["name"] == FINISH and sorted(finish["parameters"]["required"]) == ["meeting_holding_slot", "reason"]
    assert finish["parameters"]["properties"]["reason"]["enum"] == observation["answer_schema"]["properties"]["reason"]["enum"]
    env.step(CHECK)
    with pytest.raises(ValueError, match="not \\['holder'\\]"):
        env.step({"tool": FINISH, "arguments": {"holder": "Launch checklist"}})
    _, reward, terminated, _, info = env.step({"tool": FINISH, "arguments": {"answer": PROSE, **RIGHT}})
    assert (reward, terminated, info["passed"], info["answer_json"]) == (1.0, True, True, RIGHT)
    trajectory = env.trajectory()
    assert json.loads(trajectory.answer_json) == RIGHT and trajectory.answer == PROSE

    env.reset(REFUSE, seed=0)
    env.step(CHECK)
    _, reward, _, _, info = env.step({"tool": FINISH, "arguments": {"summary": PROSE, **WRONG}})
    assert (reward, info["passed"]) == (0.0, False) and json.loads(env.trajectory().answer_json) == WRONG


def test_a_task_without_a_typed_answer_takes_none(client):
    env = ToolEnv(client)
    observation, _ = env.reset(CHEAPEST, seed=0)
    assert observation["answer_schema"] is None and list(observation["finish"]["parameters"]["properties"]) == ["answer"]
    with pytest.raises(ValueError, match="asks for no typed answer"):
        env.step({"tool": FINISH, "arguments": {"reason": "slot_taken"}})
    _, _, terminated, _, info = env.step({"tool": FINISH, "arguments": {"answer": "nothing to do"}})
    assert terminated and info["answer_json"] is None and not env.trajectory().HasField("answer_json")


def test_the_asyncio_and_vector_envs_send_the_typed_fields(server):
    async def play(typed):
        env = AsyncToolEnv(server)
        try:
            observation, _ = await env.reset(REFUSE, seed=0)
            assert observation["answer_schema"] == env.answer_schema
            await env.step(CHECK)
            _, reward, _, _, info = await env.step({"tool": FINISH, "arguments": {"answer": PROSE, **typed}})
            return reward, info["passed"], json.loads((await env.trajectory()).answer_json)
        finally:
            await env.close()

    assert asyncio.run(play(RIGHT)) == (1.0, True, RIGHT)
    assert asyncio.run(play(WRONG)) == (0.0, False, WRONG)

    with VectorEnv(server, 2, [REFUSE]) as vector:
        vector.reset(seed=0)
        vector.step([CHECK, CHECK])
        _, rewards, terminations, _, _ = vector.step([{"tool": FINISH, "arguments": RIGHT}, {"tool": FINISH, "arguments": WRONG}])
        assert (rewards, terminations) == ([1.0, 0.0], [True, True])
        assert [json.loads(vector.trajectory(i).answer_json) for i in range(2)] == [RIGHT, WRONG]
        vector.reset(seed=0)
        with pytest.raises(ValueError, match="slot 1: finish takes"):
            vector.step([CHECK, {"tool": FINISH, "arguments": {"holder": "x"}}])


def test_the_workers_llm_policy_offers_typed_finish_and_sends_what_the_model_filled(client, server):
    sys.path.insert(0, str(EXAMPLES))
    try:
        from scripted_model import ScriptedModel
    finally:
        sys.path.remove(str(EXAMPLES))
    run = client.create_run(agents=["python-llm"], suite=SUITE, domain=pb.DOMAIN_SCHEDULING, level=3, time_scale=0.0)
    assert run.planned == 1
    script = [{"tool": CHECK[0], "arguments": CHECK[1]}, {"tool": FINISH, "arguments": {"answer": PROSE, **RIGHT}}]
    with ScriptedModel(script) as model:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "worker.py"), "--url", server, "--run", run.run_id, "--label", "python-llm", "--policy", "llm"],
            env={**os.environ, "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test-key"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"run": run.run_id, "played": 1, "passed": 1}, done.stderr
    # The model was offered finish with the schema's fields as parameters, and told to fill them.
    request = model.requests[0]
    [finish] = [t["function"] for t in request["tools"] if t["function"]["name"] == FINISH]
    assert sorted(finish["parameters"]["required"]) == ["meeting_holding_slot", "reason"]
    assert "meeting_holding_slot" in request["messages"][0]["content"]
    assert len(model.requests) == 2, "finish ends the episode: no request after it"
    episode_id = re.search(r"episode (\S+)\)", done.stderr).group(1)
    trajectory = client.trajectory(episode_id)
    assert json.loads(trajectory.answer_json) == RIGHT and trajectory.answer == PROSE
