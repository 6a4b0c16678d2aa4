"""Rewards for training: the terminal verdict, partial credit and penalties.

The reward of an episode is computed once, when it ends (``finish`` or a spent
call budget), from the server's verdict and trajectory; every step before is
worth 0. :class:`Reward` says how:

- ``mode="verdict"`` (the default): 1.0 when the verdict passed, else 0.0;
- ``mode="partial"``: the share of the verdict's checks that passed (a task
  with no checks is worth its verdict);

then each penalty's weight times its count is subtracted (weights default to
0, so the default reward is exactly the verdict):

- ``collateral``: the collateral checks that failed (checks named
  ``collateral: …``: something changed that the task did not ask for, or a
  write was applied twice by a blind retry);
- ``repeated_writes``: calls of a state-changing tool repeating, argument for
  argument, an earlier call of that tool that changed the state (a keyed
  retry the server answered from its first execution is not counted);
- ``unrecovered_faults``: faults the agent met (explicit errors) and never
  got past with a later fault-free reply of the same tool (the verdict's
  ``fault_stats``: encountered − recovered).

The reward is not clipped. :func:`reward_info` gives every figure used (the
checks, the fault ledger, the counts, each term), so a user can build a
reward of their own from ``info`` instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List

from toolenv.client import pb
from toolenv.env import ledger

__all__ = ["Reward", "checks", "penalty_counts", "reward_info"]

MODES = ("verdict", "partial")


@dataclass(frozen=True)
class Reward:
    """How an episode's end is scored (see the module's documentation)."""

    mode: str = "verdict"
    #: Subtracted per failed collateral check.
    collateral: float = 0.0
    #: Subtracted per repeated write.
    repeated_writes: float = 0.0
    #: Subtracted per fault met and never recovered from.
    unrecovered_faults: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"reward mode must be one of {MODES}, not {self.mode!r}")
        for name in ("collateral", "repeated_writes", "unrecovered_faults"):
            if getattr(self, name) < 0:
                raise ValueError(f"the {name} penalty is a weight to subtract: give it as a number >= 0")

    def terms(self, verdict: pb.Verdict, trajectory: pb.Trajectory) -> Dict[str, float]:
        """Each term of the reward: ``base`` and the penalties (as the negative amounts added)."""
        counts = penalty_counts(verdict, trajectory)
        if self.mode == "partial" and verdict.checks:
            base = sum(check.passed for check in verdict.checks) / len(verdict.checks)
        else:
            base = 1.0 if verdict.passed else 0.0
        return {
            "base": base,
            "collateral": 0.0 - self.collateral * counts["collateral"],
            "repeated_writes": 0.0 - self.repeated_writes * counts["repeated_writes"],
            "unrecovered_faults": 0.0 - self.unrecovered_faults * counts["unrecovered_faults"],
        }

    def __call__(self, verdict: pb.Verdict, trajectory: pb.Trajectory) -> float:
        """The reward of a finished episode."""
        return sum(self.terms(verdict, trajectory).values())


def checks(verdict: pb.Verdict) -> List[Dict[str, Any]]:
    """The verdict's checks as dicts: ``name``, ``passed``, ``expected`` and ``actual`` (decoded JSON)."""

    def value(text: str) -> Any:
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    return [
        {"name": c.name, "passed": c.passed, "expected": value(c.expected_json), "actual": value(c.actual_json)} for c in verdict.checks
    ]


def _repeated_writes(trajectory: pb.Trajectory) -> int:
    applied = set()
    repeats = 0
    for call in trajectory.calls:
        key = (call.tool_name, _canonical(call.arguments_json))
        keyed_retry = call.HasField("idempotency_key_call") and call.idempotency_key_call != call.index
        if key in applied and not keyed_retry:
            repeats += 1
        if call.state_changed:
            applied.add(key)
    return repeats


def _canonical(arguments_json: str) -> str:
    try:
        return json.dumps(json.loads(arguments_json or "{}"), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments_json


def penalty_counts(verdict: pb.Verdict, trajectory: pb.Trajectory) -> Dict[str, int]:
    """What the penalties count: failed collateral checks, repeated writes, unrecovered faults."""
    stats = verdict.fault_stats
    return {
        "collateral": sum(1 for c in verdict.checks if c.name.startswith("collateral") and not c.passed),
        "repeated_writes": _repeated_writes(trajectory),
        "unrecovered_faults": max(stats.encountered - stats.recovered, 0),
    }


def reward_info(reward: Reward, verdict: pb.Verdict, trajectory: pb.Trajectory) -> Dict[str, Any]:
    """The ``info`` of an episode's last step: the verdict, every check, the fault ledger, the
    fault figures, the penalty counts and the reward's terms."""
    stats = verdict.fault_stats
    return {
        "verdict": verdict,
        "passed": verdict.passed,
        "feasible": verdict.feasible if verdict.HasField("feasible") else None,
        "checks": checks(verdict),
        "ledger": ledger(trajectory),
        "fault_stats": {"injected": stats.injected, "encountered": stats.encountered, "recovered": stats.recovered, "extra_calls": stats.extra_calls},
        "penalty_counts": penalty_counts(verdict, trajectory),
        "reward_terms": reward.terms(verdict, trajectory),
    }
