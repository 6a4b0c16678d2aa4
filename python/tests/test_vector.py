"""The asyncio and vector environments against a real server: batching, autoreset, bad actions."""

import asyncio
import json

import pytest

from toolenv import FINISH, ToolEnv, pb
from toolenv.aio import AsyncClient, AsyncToolEnv, EpisodeOver
from toolenv.vector import AsyncVectorEnv, BatchError, EpisodeSpec, VectorEnv

from test_env import CHEAPEST, REFERENCE



def scripted(tools, slot, step):
    """A policy that depends only on (slot, step): each tool in turn, with reference-like arguments where known."""
    if step == 6:
        return {"tool": FINISH}
    tool = tools[(slot + step) % len(tools)]
    known = dict(REFERENCE)
    return {"tool": tool, "arguments": known.get(tool, {})}


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_the_same_task_seed_and_trial_give_the_same_trajectory_alone_or_in_a_batch_of_256(server, client, streaming):
    every = [t.id for t in client.list_tasks()]
    tasks = every[:: max(len(every) // 16, 1)][:16]
    schedule = lambda i, k, seed: EpisodeSpec(tasks[i % 16], seed=seed + i, trial=k, epsilon=0.2, faults="0.3")  # noqa: E731
    env = VectorEnv(server, 256, schedule, streaming=streaming)
    observations, infos = env.reset(seed=100)
    tools = [[t["name"] for t in observation["tools"]] for observation in observations]
    for step in range(7):
        _, rewards, terminations, truncations, infos = env.step([scripted(tools[i], i, step) for i in range(256)])
    assert all(terminations), "every slot finished on its 7th step"
    faults_met = sum(len(ledger) for ledger in infos["ledger"])
    batched = [env.trajectory(i).SerializeToString(deterministic=True) for i in range(256)]
    env.close()
    assert faults_met > 0, "λ = 0.3 meets faults, so the fault schedule is part of what is compared"
    alone = ToolEnv(client)
    for i in range(256):
        alone.reset(tasks[i % 16], seed=100 + i, trial=0, epsilon=0.2, faults="0.3")
        for step in range(7):
            alone.step(scripted(tools[i], i, step))
        assert alone.trajectory().SerializeToString(deterministic=True) == batched[i], f"slot {i}"


def test_next_step_autoreset_starts_the_next_trial_on_the_step_after_the_end(server):
    with VectorEnv(server, 2, [CHEAPEST]) as env:
        observations, infos = env.reset(seed=5)
        assert infos["seed"] == [5, 6] and infos["trial"] == [0, 0]
        for action in REFERENCE:
            env.step([action, action])
        _, rewards, terminations, _, infos = env.step([{"tool": FINISH}, ("search_flights", {"origin": "LON"})])
        assert rewards[0] == 1.0 and terminations == [True, False]
        assert infos["_passed"] == [True, False] and infos["checks"][0][-1]["name"].startswith("collateral")
        observations, rewards, terminations, truncations, infos = env.step([("ignored", {}), {"tool": FINISH}])
        assert observations[0]["description"] and infos["trial"][0] == 1 and infos["_trial"] == [True, False]
        assert (rewards, terminations, truncations) == ([0.0, 1.0], [False, True], [False, False])


def test_same_step_autoreset_returns_the_new_episode_and_the_final_one_in_infos(server):
    with VectorEnv(server, 2, [CHEAPEST], autoreset_mode="same_step") as env:
        env.reset(seed=0)
        first = [e.episode_id for e in env.envs]
        observations, rewards, terminations, _, infos = env.step([{"tool": FINISH}, REFERENCE[0]])
        assert terminations == [True, False] and infos["_final_obs"] == [True, False]
        assert infos["final_obs"][0]["kind"] == "verdict" and infos["final_info"][0]["passed"] is False
        assert "description" in observations[0] and env.envs[0].episode_id != first[0] and env.envs[1].episode_id == first[1]


def test_disabled_autoreset_refuses_a_step_of_an_ended_slot_until_reset_by_mask(server):
    with VectorEnv(server, 2, [CHEAPEST], autoreset_mode="disabled") as env:
        env.reset(seed=0)
        env.step([{"tool": FINISH}, REFERENCE[0]])
        steps_before = env.envs[1].steps
        with pytest.raises(EpisodeOver, match=r"slot\(s\) \[0\]"):
            env.step([REFERENCE[0], REFERENCE[0]])
        assert env.envs[1].steps == steps_before, "nothing was sent"
        observations, _ = env.reset(options={"reset_mask": [True, False]})
        assert observations[1] is None and observations[0]["task_id"] == CHEAPEST
        _, _, terminations, _, _ = env.step([REFERENCE[0], REFERENCE[0]])
        assert terminations == [False, False]


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_bad_actions_are_observations_or_clear_errors_never_a_hung_batch(server, streaming):
    with VectorEnv(server, 3, [CHEAPEST], streaming=streaming) as env:
        env.reset(seed=0)
        observations, _, _, _, infos = env.step([("no_such_tool", {}), ("search_flights", {"origin": 5}), ("search_flights", "{not json")])
        codes = [json.loads(o["text"])["error"]["code"] for o in observations]
        assert codes == ["NOT_FOUND", "INVALID_ARGUMENT", "INVALID_ARGUMENT"] and all(o["is_error"] for o in observations)
        assert infos["code"] == codes
        steps = [e.steps for e in env.envs]
        with pytest.raises(ValueError, match="slot 1: the action names no tool"):
            env.step([REFERENCE[0], {"arguments": {}}, REFERENCE[0]])
        with pytest.raises(ValueError, match="slot 2: the arguments of search_flights are not JSON"):
            env.step([REFERENCE[0], REFERENCE[0], ("search_flights", {"when": {1, 2}})])
        with pytest.raises(ValueError, match="one action per episode"):
            env.step([REFERENCE[0]])
        assert [e.steps for e in env.envs] == steps, "a refused batch sends nothing"


def test_the_call_budget_truncates_every_slot_with_its_verdict_and_checks(server):
    with VectorEnv(server, 4, [CHEAPEST]) as env:
        observations, _ = env.reset(seed=0)
        budget = observations[0]["max_calls"]
        for step in range(budget):
            _, rewards, terminations, truncations, infos = env.step([("get_traveler_profile", {"name": "Bob"})] * 4)
            assert truncations == [step == budget - 1] * 4
        assert rewards == [0.0] * 4 and infos["passed"] == [False] * 4 and len(infos["checks"][0]) >= 2
        assert [e.done for e in env.envs] == [True] * 4


def test_a_server_that_does_not_answer_fails_the_batch_within_its_deadline():
    async def play():
        env = AsyncVectorEnv("127.0.0.1:1", 4, [CHEAPEST], timeout=2.0)
        try:
            await asyncio.wait_for(env.reset(seed=0), timeout=20)
        finally:
            await env.close()

    with pytest.raises(BatchError, match="4 slot"):
        asyncio.run(play())


def test_the_async_env_steps_as_the_sync_one_and_refuses_a_step_after_the_end(server, client):
    async def play():
        async with AsyncClient(server) as shared:
            env = AsyncToolEnv(shared, detailed=True)
            observation, info = await env.reset(CHEAPEST, seed=3, faults="0.3")
            for action in REFERENCE:
                _, reward, terminated, truncated, info = await env.step(action)
                assert "ledger" in info and (reward, terminated, truncated) == (0.0, False, False)
            _, reward, terminated, _, info = await env.step({"tool": FINISH})
            with pytest.raises(EpisodeOver):
                await env.step(REFERENCE[0])
            return env.episode_id, reward, info

    episode_id, reward, info = asyncio.run(play())
    sync = ToolEnv(client)
    sync.reset(CHEAPEST, seed=3, faults="0.3")
    for action in REFERENCE:
        sync.step(action)
    _, sync_reward, _, _, sync_info = sync.step({"tool": FINISH})
    assert client.trajectory(episode_id).SerializeToString(deterministic=True) == sync.trajectory().SerializeToString(deterministic=True)
    assert (reward, info["ledger"]) == (sync_reward, sync_info["ledger"])


def test_a_detailed_step_puts_a_refused_call_next_to_no_ledger_entry(server):
    async def play():
        async with AsyncClient(server) as shared:
            env = AsyncToolEnv(shared, detailed=True)
            await env.reset(CHEAPEST, seed=0, faults=pb.FaultProfile(failure_rate=1.0, fault_weights={"ConnectionReset": 1.0}))
            _, _, _, _, faulted = await env.step(REFERENCE[0])
            _, _, _, _, refused = await env.step(("no_such_tool", {}))
            return faulted, refused

    faulted, refused = asyncio.run(play())
    assert faulted["fault"]["kind"] == "ConnectionReset" and len(faulted["ledger"]) == 1
    assert refused["code"] == "NOT_FOUND" and refused["fault"] is None and len(refused["ledger"]) == 1


def test_a_vector_env_that_cannot_start_leaves_no_loop_running():
    import threading

    before = threading.active_count()
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv("127.0.0.1:1", 0, [CHEAPEST])
    assert threading.active_count() == before


def test_a_streamed_call_reads_as_the_unary_one_faults_and_retry_advice_included(server):
    rate_limited = pb.FaultProfile(failure_rate=1.0, fault_weights={"SoftRateLimit": 1.0})

    async def play(streaming):
        async with AsyncClient(server, streaming=streaming) as shared:
            env = AsyncToolEnv(shared)
            results = []
            for profile in (rate_limited, None):
                await env.reset(CHEAPEST, seed=0, faults=profile)
                results += [(await env.step(action))[0] for action in REFERENCE + [("no_such_tool", {})]]
            return results

    unary, streamed = asyncio.run(play(False)), asyncio.run(play(True))
    assert streamed == unary
    assert any("retry_after" in o["text"] for o in unary), "the rate limit's advice is part of what is compared"


def test_a_stream_to_a_server_that_is_not_there_fails_each_call_as_a_status():
    async def play():
        async with AsyncClient("127.0.0.1:1", streaming=True, timeout=3.0) as shared:
            return await asyncio.wait_for(asyncio.gather(*(shared.call_tool(f"ep-{i}", "search_flights", {}) for i in range(3))), 20)

    results = asyncio.run(play())
    assert [r.kind for r in results] == ["status"] * 3 and all(r.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED") for r in results)
