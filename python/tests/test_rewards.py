"""Rewards: the verdict, partial credit, and each documented penalty, from real episodes."""

import asyncio

import pytest

from toolenv import FINISH, pb
from toolenv.aio import AsyncClient, AsyncToolEnv
from toolenv.rewards import Reward

CHEAPEST = "travel/cheapest-flight/001"
SEARCH = ("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"})
HOLD = ("hold_flight", {"flight_id": "AA-500"})
CONFIRM = ("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"})
ALWAYS_RESET = pb.FaultProfile(failure_rate=1.0, fault_weights={"ConnectionReset": 1.0})
PENALTIES = Reward(mode="partial", collateral=0.25, repeated_writes=0.1, unrecovered_faults=0.05)


def finish(server, actions, reward, faults=None):
    async def play():
        async with AsyncClient(server) as client:
            env = AsyncToolEnv(client, reward=reward)
            await env.reset(CHEAPEST, seed=0, faults=faults)
            for action in actions:
                await env.step(action)
            _, value, terminated, _, info = await env.step({"tool": FINISH})
            assert terminated
            return value, info

    return asyncio.run(play())


def test_the_default_reward_is_the_verdict_and_info_has_every_check(server):
    value, info = finish(server, [SEARCH, HOLD, CONFIRM], Reward())
    assert value == 1.0 and info["passed"] and all(c["passed"] for c in info["checks"])
    assert [c["name"] for c in info["checks"]] == [c.name for c in info["verdict"].checks]
    value, info = finish(server, [SEARCH, HOLD], Reward())
    assert value == 0.0 and not info["passed"]


def test_partial_credit_is_the_share_of_checks_passed(server):
    value, info = finish(server, [SEARCH, HOLD], Reward(mode="partial"))
    passed = sum(c["passed"] for c in info["checks"])
    assert 0 < passed < len(info["checks"]), "holding without confirming passes some checks, not all"
    assert value == pytest.approx(passed / len(info["checks"]))
    assert info["reward_terms"]["base"] == value


def test_a_collateral_change_costs_its_penalty(server):
    value, info = finish(server, [SEARCH, HOLD, CONFIRM, ("hold_flight", {"flight_id": "BA-200"})], PENALTIES)
    assert info["penalty_counts"]["collateral"] >= 1
    failed = [c["name"] for c in info["checks"] if not c["passed"]]
    assert failed and all(name.startswith("collateral") for name in failed)
    expected = info["reward_terms"]["base"] - 0.25 * info["penalty_counts"]["collateral"]
    assert value == pytest.approx(expected) and value < 1.0


def test_a_repeated_write_counts_and_a_keyed_retry_does_not(server):
    _, info = finish(server, [SEARCH, HOLD, HOLD, CONFIRM], PENALTIES)
    assert info["penalty_counts"]["repeated_writes"] == 1
    keyed = {"tool": HOLD[0], "arguments": HOLD[1], "idempotency_key": "hold-1"}
    _, info = finish(server, [SEARCH, keyed, keyed, CONFIRM], PENALTIES)
    assert info["penalty_counts"]["repeated_writes"] == 0
    assert info["reward_terms"]["repeated_writes"] == 0.0


def test_an_unrecovered_fault_counts_and_the_ledger_is_in_info(server):
    value, info = finish(server, [SEARCH], PENALTIES, faults=ALWAYS_RESET)
    assert info["ledger"] == [{"index": 0, "tool": "search_flights", "kind": "ConnectionReset", "new": True, "recoverable": True}]
    assert info["fault_stats"]["encountered"] == 1 and info["penalty_counts"]["unrecovered_faults"] == 1
    assert value == pytest.approx(sum(info["reward_terms"].values())) and info["reward_terms"]["unrecovered_faults"] == pytest.approx(-0.05)


def test_a_reward_must_make_sense():
    with pytest.raises(ValueError, match="mode"):
        Reward(mode="dense")
    with pytest.raises(ValueError, match="collateral"):
        Reward(collateral=-1)
