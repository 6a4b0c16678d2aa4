"""The Gymnasium-style environment and the typed client against a real server."""

import json

import pytest

from toolenv import FINISH, ToolEnv, pb

CHEAPEST = "travel/cheapest-flight/001"
REFERENCE = [
    ("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}),
    ("get_traveler_profile", {"name": "Bob"}),
    ("hold_flight", {"flight_id": "AA-500"}),
    ("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}),
]
ALWAYS_RESET = pb.FaultProfile(failure_rate=1.0, fault_weights={"ConnectionReset": 1.0})


@pytest.fixture()
def env(client):
    return ToolEnv(client)


def test_reset_gives_the_description_and_the_tools_with_their_schemas(env, client):
    observation, info = env.reset(CHEAPEST, seed=0)
    task = client.get_task(CHEAPEST)
    assert observation["description"] == task.summary.description
    assert observation["today"] == task.today
    assert [t["name"] for t in observation["tools"]] == [t.name for t in task.tools]
    assert [t["parameters"] for t in observation["tools"]] == [json.loads(t.parameters_json_schema) for t in task.tools]
    assert info["episode_id"] == env.episode_id


def test_the_reference_calls_pass_and_the_reward_is_the_verdict(env):
    env.reset(CHEAPEST, seed=0)
    for tool, arguments in REFERENCE:
        observation, reward, terminated, truncated, info = env.step({"tool": tool, "arguments": arguments})
        assert (reward, terminated, truncated, observation["is_error"]) == (0.0, False, False, False), observation
        assert info["fault"] is None
    observation, reward, terminated, truncated, info = env.step({"tool": FINISH})
    assert (reward, terminated, truncated, info["passed"]) == (1.0, True, False, True)
    assert info["verdict"].passed and all(check.passed for check in info["verdict"].checks)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"tool": FINISH})


def test_doing_nothing_fails(env):
    env.reset(CHEAPEST, seed=0)
    _, reward, terminated, _, info = env.step({"tool": FINISH})
    assert (reward, terminated, info["passed"]) == (0.0, True, False)


def test_a_fault_as_a_status_is_an_error_and_is_in_the_ledger(env):
    env.reset(CHEAPEST, seed=0, faults=ALWAYS_RESET)
    observation, reward, _, _, info = env.step(REFERENCE[0])
    assert observation["is_error"] and observation["kind"] == "status"
    assert json.loads(observation["text"])["error"]["code"] == "UNAVAILABLE"
    assert info["fault"] == {"kind": "ConnectionReset", "new": True, "recoverable": True}
    _, _, _, _, info = env.step(REFERENCE[0])
    assert [entry["index"] for entry in info["ledger"]] == [0, 1]


def test_a_fault_in_band_is_text_in_an_ok_reply(env):
    env.reset(CHEAPEST, seed=0, faults=ALWAYS_RESET, delivery="in_band")
    observation, _, _, _, info = env.step(REFERENCE[0])
    assert not observation["is_error"] and observation["kind"] == "result"
    assert json.loads(observation["text"])["error"]["code"] == "UNAVAILABLE"
    assert info["fault"]["kind"] == "ConnectionReset"


def test_a_domain_error_and_a_bad_call_are_errors_the_agent_reads(env):
    env.reset(CHEAPEST, seed=0)
    observation, _, _, _, info = env.step(("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}))
    assert observation["kind"] == "domain_error" and "domain_error" in json.loads(observation["text"])
    observation, _, _, _, info = env.step(("search_flights", {"origin": 5}))
    assert observation["kind"] == "status" and json.loads(observation["text"])["error"]["code"] == "INVALID_ARGUMENT"
    assert info["reached_episode"], "an invalid call is recorded in the trajectory"


def test_the_call_budget_truncates_and_finishes(env):
    observation, _ = env.reset(CHEAPEST, seed=0)
    assert observation["max_calls"] == 12
    for i in range(12):
        _, reward, terminated, truncated, info = env.step(("get_traveler_profile", {"name": "Bob"}))
        if truncated:
            break
    assert (i, terminated, truncated, reward, info["passed"]) == (11, False, True, 0.0, False)
    assert len(env.trajectory().calls) == 12


def test_reset_needs_a_task_and_takes_gymnasium_options(env):
    with pytest.raises(ValueError, match="which task"):
        env.reset()
    with pytest.raises(ValueError, match="unknown option"):
        env.reset(options={"task": CHEAPEST, "lambda": 0.2})
    observation, info = env.reset(seed=3, options={"task": CHEAPEST, "faults": "0.2", "epsilon": 0.1})
    assert env.trajectory().seed == 3 and env.trajectory().epsilon == 0.1
    assert info["fault_profile"]["failure_rate"] == pytest.approx(0.175)


def test_the_same_calls_give_the_same_trajectory(env):
    trajectories = []
    for _ in range(2):
        env.reset(CHEAPEST, seed=7, epsilon=0.2, faults="0.3")
        for action in REFERENCE:
            env.step(action)
        env.step({"tool": FINISH})
        trajectories.append(env.trajectory().SerializeToString(deterministic=True))
    assert trajectories[0] == trajectories[1]
