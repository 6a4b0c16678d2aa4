"""Branching from a shared prefix (ForkEpisode): independence and determinism."""

import asyncio

import pytest

from toolenv import FINISH, ToolEnv, pb
from toolenv.aio import AsyncClient, AsyncToolEnv
from toolenv.vector import VectorEnv

CHEAPEST = "travel/cheapest-flight/001"
PREFIX = [
    ("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}),
    ("get_traveler_profile", {"name": "Bob"}),
]
BOOK = [
    ("hold_flight", {"flight_id": "AA-500"}),
    ("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}),
]
WRONG = [("hold_flight", {"flight_id": "BA-200"}), ("confirm_booking", {"flight_id": "BA-200", "passenger": "Bob", "payment_info": "card_4242"})]


def serialized(trajectory: pb.Trajectory) -> bytes:
    return trajectory.SerializeToString(deterministic=True)


async def play(env, actions):
    out = None
    for action in actions:
        out = await env.step(action)
    return out


def test_branches_are_independent_and_the_parent_goes_on_untouched(server):
    async def scenario():
        async with AsyncClient(server) as client:
            parent = AsyncToolEnv(client)
            await parent.reset(CHEAPEST, seed=4, faults="0.2")
            await play(parent, PREFIX)
            right, wrong, idle = await parent.branch(3)
            assert len({right.episode_id, wrong.episode_id, idle.episode_id, parent.episode_id}) == 4
            assert right.steps == len(PREFIX)
            # Interleaved on purpose: one branch's writes must not reach another.
            await right.step(BOOK[0])
            await wrong.step(WRONG[0])
            await right.step(BOOK[1])
            await wrong.step(WRONG[1])
            rewards = [(await b.step({"tool": FINISH}))[1] for b in (right, wrong, idle)]
            seats = {}
            for name, branch in (("right", right), ("wrong", wrong), ("idle", idle)):
                seats[name] = [c.path for c in branch.verdict.state_diff]
            parent_trajectory = await parent.trajectory()
            return rewards, seats, parent_trajectory

    rewards, diffs, parent_trajectory = asyncio.run(scenario())
    assert rewards == [1.0, 0.0, 0.0]
    assert diffs["idle"] == [] and diffs["right"] and diffs["wrong"] and diffs["right"] != diffs["wrong"]
    assert [c.tool_name for c in parent_trajectory.calls] == [tool for tool, _ in PREFIX], "the parent has only its own calls"


def test_a_branch_is_the_episode_played_from_scratch_with_the_same_calls(server, client):
    async def branched():
        async with AsyncClient(server) as shared:
            parent = AsyncToolEnv(shared)
            await parent.reset(CHEAPEST, seed=9, epsilon=0.2, faults="0.3", trial=2)
            await play(parent, PREFIX + BOOK)
            # From an earlier step than the parent's last, twice with the same continuation.
            first, second = await parent.branch(2, at=1)
            for branch in (first, second):
                await play(branch, PREFIX[1:] + BOOK + [{"tool": FINISH}])
            return serialized(await first.trajectory()), serialized(await second.trajectory())

    first, second = asyncio.run(branched())
    assert first == second
    scratch = ToolEnv(client)
    scratch.reset(CHEAPEST, seed=9, epsilon=0.2, faults="0.3", trial=2)
    for action in PREFIX + BOOK + [{"tool": FINISH}]:
        scratch.step(action)
    assert serialized(scratch.trajectory()) == first


def test_branching_refuses_what_cannot_be_forked(server):
    async def scenario():
        async with AsyncClient(server) as client:
            env = AsyncToolEnv(client)
            await env.reset(CHEAPEST, seed=0)
            await env.step(PREFIX[0])
            with pytest.raises(ValueError, match=r"within 0\.\.1"):
                await env.branch(2, at=5)
            with pytest.raises(ValueError, match="at least 1"):
                await env.branch(0)
            await env.step({"tool": FINISH})
            return len(await env.branch(2, at=0))  # a finished episode branches too

    assert asyncio.run(scenario()) == 2


def test_a_vector_of_branches_is_a_grpo_group(server):
    with VectorEnv(server, 2, [CHEAPEST]) as env:
        env.reset(seed=0)
        for action in PREFIX:
            env.step([action, action])
        group = env.branch(1, 4)
        assert group.num_envs == 4 and [e.steps for e in group.envs] == [2] * 4
        group.step([BOOK[0], WRONG[0], BOOK[0], ("get_traveler_profile", {"name": "Bob"})])
        group.step([BOOK[1], WRONG[1], BOOK[1], ("get_traveler_profile", {"name": "Bob"})])
        _, rewards, terminations, _, infos = group.step([{"tool": FINISH}] * 4)
        assert rewards == [1.0, 0.0, 1.0, 0.0] and terminations == [True] * 4
        assert [len(checks) for checks in infos["checks"]] == [len(infos["checks"][0])] * 4
        with pytest.raises(Exception, match="ended"):
            group.step([{"tool": FINISH}] * 4)
        group.close()
        # The parent's slots are untouched by the group.
        assert [len(env.trajectory(i).calls) for i in range(2)] == [2, 2]
