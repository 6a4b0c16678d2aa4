"""Real rollouts through SkyRL-gym (the installed framework) against a real server, with a scripted policy."""

import json

import skyrl_gym

from toolenv import ToolEnv
from toolenv.integrations.skyrl import ToolEnvSkyRL, register

CHEAPEST = "travel/cheapest-flight/001"
SEARCH = {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}
CONFIRM = {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}
# The same plan written in each form a model uses: bare JSON, a fenced list, ReAct, then a final answer.
RIGHT = [
    json.dumps({"name": "search_flights", "arguments": SEARCH}),
    "Now the profile and a hold.\n```json\n"
    + json.dumps([{"name": "get_traveler_profile", "arguments": {"name": "Bob"}}, {"name": "hold_flight", "arguments": {"flight_id": "AA-500"}}])
    + "\n```",
    "Thought: confirm it.\nAction: confirm_booking\nAction Input: " + json.dumps(CONFIRM),
    "The cheapest flight, AA-500, is booked for Bob.",
]
WRONG = [
    json.dumps({"name": "search_flights", "arguments": SEARCH}),
    json.dumps({"name": "hold_flight", "arguments": {"flight_id": "BA-200"}}),
    "Action: fly_me_there\nAction Input: {}",
    json.dumps({"name": "finish", "arguments": {}}),
]


def rollout(server, replies, **extras):
    """What SkyRL's generator does with one rollout: make, init, step the model's replies until done."""
    register()
    env = skyrl_gym.make("toolenv", env_config={"server": server}, extras={"task": CHEAPEST, **extras})
    conversation, metadata = env.init([])
    assert [m["role"] for m in conversation] == ["system", "user"] and "search_flights" in conversation[0]["content"]
    assert [t["function"]["name"] for t in metadata["tools"]][-1] == "finish"
    rewards, out = [], None
    for reply in replies:
        out = env.step(reply)
        conversation += [{"role": "assistant", "content": reply}] + out["observations"]
        rewards.append(out["reward"])
        if out["done"]:
            break
    return env, rewards, out, conversation, metadata["episode_id"]


def test_a_rollout_in_every_reply_form_passes_and_is_the_episode_played_directly(server, client):
    env, rewards, out, conversation, episode_id = rollout(server, RIGHT, seed=0)
    assert isinstance(env, ToolEnvSkyRL) and out["done"]
    assert rewards == [0.0, 0.0, 0.0, 1.0]
    assert out["metadata"]["passed"] and all(c["passed"] for c in out["metadata"]["checks"])
    assert env.get_metrics() == {"turns": 4, "calls": 4, "protocol_errors": 0, "passed": 1.0, "faults_met": 0}
    assert sum(1 for m in conversation if m["content"].startswith("[")) == 4, "one observation per call"
    direct = ToolEnv(client)
    direct.reset(CHEAPEST, seed=0)
    for tool, arguments in [("search_flights", SEARCH), ("get_traveler_profile", {"name": "Bob"}), ("hold_flight", {"flight_id": "AA-500"}), ("confirm_booking", CONFIRM)]:
        direct.step((tool, arguments))
    direct.step({"tool": "finish", "arguments": {"answer": RIGHT[-1]}})
    assert client.trajectory(episode_id).SerializeToString(deterministic=True) == direct.trajectory().SerializeToString(deterministic=True)


def test_a_wrong_rollout_scores_by_the_reward_given_and_a_malformed_reply_is_told_back(server):
    reward = {"mode": "partial", "collateral": 0.5}
    env, rewards, out, conversation, _ = rollout(server, WRONG, seed=0, reward=reward)
    told = [m["content"] for m in conversation if m["content"].startswith("Your reply could not be read")]
    assert len(told) == 1 and "fly_me_there" in told[0]
    terms = out["metadata"]["reward_terms"]
    assert rewards[-1] == terms["base"] + terms["collateral"] and 0.0 < terms["base"] < 1.0
    assert out["metadata"]["penalty_counts"]["collateral"] >= 1 and env.get_metrics()["protocol_errors"] == 1


def test_a_batch_of_rollouts_under_faults_gives_metrics_skyrl_aggregates(server):
    metrics, passed = [], []
    for seed in range(8):
        env, rewards, out, _, _ = rollout(server, RIGHT, seed=seed, faults="0.3", max_turns=4)
        assert out["done"], "max_turns ends and judges the episode"
        metrics.append(env.get_metrics())
        passed.append(rewards[-1])
    summary = ToolEnvSkyRL.aggregate_metrics(metrics)
    assert summary["passed"] == sum(passed) / 8
    assert 0 < sum(passed) < 8, "a plan that ignores faults passes some seeds at λ = 0.3, not all"
    assert summary["faults_met"] > 0


def test_a_rollout_of_an_answer_task_finishes_with_the_typed_fields_the_model_gave(server, client):
    from test_typed_answers import CHECK, REFUSE, RIGHT, WRONG

    register()
    results = []
    for typed in (RIGHT, WRONG):
        env = skyrl_gym.make("toolenv", env_config={"server": server}, extras={"task": REFUSE, "seed": 0})
        conversation, metadata = env.init([])
        # The model is told the fields, and finish's parameters are the answer schema's.
        assert "meeting_holding_slot" in conversation[0]["content"] and metadata["answer_schema"] == client.answer_schema(REFUSE)
        [finish] = [t["function"] for t in metadata["tools"] if t["function"]["name"] == "finish"]
        assert sorted(finish["parameters"]["required"]) == ["meeting_holding_slot", "reason"]
        assert not env.step(json.dumps({"name": CHECK[0], "arguments": CHECK[1]}))["done"]
        out = env.step("```json\n" + json.dumps({"name": "finish", "arguments": {"answer": "It is taken.", **typed}}) + "\n```")
        assert out["done"] and out["metadata"]["answer_json"] == typed
        trajectory = client.trajectory(out["metadata"]["episode_id"])
        assert json.loads(trajectory.answer_json) == typed and trajectory.answer == "It is taken."
        results.append(out["reward"])
    assert results == [1.0, 0.0]
