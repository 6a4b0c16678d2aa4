"""Env steps per second from Python through the vector environment (a bench, not a test).

Starts one toolenv server (``--bin``, a release build: ``cargo build --release -p toolenv-cli``),
then for each N steps an :class:`toolenv.vector.AsyncVectorEnv` of N episodes of
travel/cheapest-flight/001 with the reference plan (4 calls and ``finish``, autoreset
on the next step), once with unary CallTool and once over the CallTools stream
(``--calls``), and prints per N: steps/s, the p50/p99 latency of one step of the
batch and of one CallTool, and the CPU seconds the client and the server spent per
1,000 steps. ``--branching`` measures GRPO-style groups instead: each slot plays two
calls, branches into ``--group`` continuations that finish the plan, and starts over.
``--million`` steps N=256 for a million steps and prints both processes' resident
memory every 100,000.

    python python/bench/throughput.py --bin target/release/toolenv
    python python/bench/throughput.py --bin target/release/toolenv --branching
    python python/bench/throughput.py --bin target/release/toolenv --million
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import subprocess
import time
from collections import deque
from typing import Deque, Dict, Optional, Sequence, Tuple

from toolenv.aio import AsyncClient, normalize_action
from toolenv.vector import AsyncVectorEnv

TASK = "travel/cheapest-flight/001"
FINISH = normalize_action({"tool": "finish"})
#: Latencies kept for the percentiles: the last this many (so that a long run's memory stays flat).
WINDOW = 100_000
PLAN = [
    ("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}),
    ("get_traveler_profile", {"name": "Bob"}),
    ("hold_flight", {"flight_id": "AA-500"}),
    ("confirm_booking", {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}),
    {"tool": "finish"},
]


def start_server(binary: str, extra: Sequence[str] = ()) -> Tuple[subprocess.Popen, str]:
    """A server on 127.0.0.1:0 with no store; returns the process and its address."""
    process = subprocess.Popen(
        [binary, "serve", "--addr", "127.0.0.1:0", "--no-store", "--time-scale", "0", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RUST_LOG": "warn", "NO_COLOR": "1"},
    )
    assert process.stderr is not None
    for line in process.stderr:
        match = re.search(r"listening on http://(\S+)", line)
        if match:
            return process, match.group(1)
    raise SystemExit("the server did not start")


def cpu_seconds(pid: Optional[int] = None) -> float:
    """User + system CPU seconds of this process (all threads) or of ``pid``."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` in MiB."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else 0.0


def figures(
    n: int, steps: int, batch_latencies: Sequence[float], call_latencies: Sequence[float], start: float, cpu_client: float, cpu_server: float, server_pid: int
) -> Dict[str, float]:
    """A run's figures, from its counts, latencies and the clocks read at its start."""
    elapsed = time.perf_counter() - start
    return {
        "n": n,
        "steps": steps,
        "steps_per_s": steps / elapsed,
        "step_p50_ms": percentile(batch_latencies, 0.5) * 1e3,
        "step_p99_ms": percentile(batch_latencies, 0.99) * 1e3,
        "call_p50_ms": percentile(call_latencies, 0.5) * 1e3,
        "call_p99_ms": percentile(call_latencies, 0.99) * 1e3,
        "client_cpu_ms_per_1k": (cpu_seconds() - cpu_client) / steps * 1e6,
        "server_cpu_ms_per_1k": (cpu_seconds(server_pid) - cpu_server) / steps * 1e6,
    }


class Timed:
    """Wraps a client's call_tool to record each call's latency."""

    def __init__(self, client: AsyncClient):
        self.latencies: Deque[float] = deque(maxlen=WINDOW)
        inner = client.call_tool

        async def call_tool(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await inner(*args, **kwargs)
            finally:
                self.latencies.append(time.perf_counter() - start)

        client.call_tool = call_tool  # type: ignore[method-assign]


async def vector_run(address: str, n: int, steps: int, server_pid: int, report_memory: bool = False, streaming: bool = False) -> Dict[str, float]:
    """Steps N episodes of the plan with next-step autoreset for about ``steps`` env steps."""
    client = AsyncClient(address, streaming=streaming)
    timed = Timed(client)
    env = AsyncVectorEnv(client, n, [TASK])
    await env.reset(seed=0)
    position = [0] * n
    batch_latencies: Deque[float] = deque(maxlen=WINDOW)
    done_steps, next_report = 0, 100_000
    cpu_client, cpu_server, start = cpu_seconds(), cpu_seconds(server_pid), time.perf_counter()
    while done_steps < steps:
        actions = [PLAN[p] if p < len(PLAN) else None for p in position]  # None: the autoreset step
        t0 = time.perf_counter()
        observations, _, terminations, truncations, _ = await env.step(actions)
        batch_latencies.append(time.perf_counter() - t0)
        for i in range(n):
            position[i] = 0 if "description" in observations[i] else position[i] + 1
        done_steps += n
        if report_memory and done_steps >= next_report:
            print(f"  {done_steps:>9} steps: client RSS {rss_mib(os.getpid()):7.1f} MiB, server RSS {rss_mib(server_pid):7.1f} MiB", flush=True)
            next_report += 100_000
    result = figures(n, done_steps, batch_latencies, timed.latencies, start, cpu_client, cpu_server, server_pid)
    await client.close()
    return result


async def branching_run(address: str, n: int, group: int, steps: int, server_pid: int, streaming: bool = False) -> Dict[str, float]:
    """N slots; each round plays two calls per slot, branches each slot into ``group``
    continuations, and steps all N×group branches to the plan's end."""
    client = AsyncClient(address, streaming=streaming)
    timed = Timed(client)
    env = AsyncVectorEnv(client, n, [TASK], autoreset_mode="disabled")
    batch_latencies: Deque[float] = deque(maxlen=WINDOW)
    done_steps = 0
    cpu_client, cpu_server, start = cpu_seconds(), cpu_seconds(server_pid), time.perf_counter()
    while done_steps < steps:
        await env.reset()
        for action in PLAN[:2]:
            t0 = time.perf_counter()
            await env.step([action] * n)
            batch_latencies.append(time.perf_counter() - t0)
            done_steps += n
        groups = await asyncio.gather(*(env.branch(slot, group, at=2) for slot in range(n)))
        branches = [branch for g in groups for branch in g.envs]
        tree = AsyncVectorEnv.of(client, branches)
        for action in PLAN[2:]:
            t0 = time.perf_counter()
            await tree.step([action] * len(branches))
            batch_latencies.append(time.perf_counter() - t0)
            done_steps += len(branches)
        # The prefixes are left live: finish them so the server can let them go.
        await asyncio.gather(*(slot.play(FINISH) for slot in env.envs))
    result = figures(n * group, done_steps, batch_latencies, timed.latencies, start, cpu_client, cpu_server, server_pid)
    await client.close()
    return result


def show(label: str, r: Dict[str, float]) -> None:
    print(
        f"{label:<24} N={int(r['n']):>4}  {r['steps_per_s']:>8.0f} steps/s  "
        f"step p50 {r['step_p50_ms']:6.2f} ms p99 {r['step_p99_ms']:6.2f} ms  "
        f"call p50 {r['call_p50_ms']:6.2f} ms p99 {r['call_p99_ms']:6.2f} ms  "
        f"CPU per 1k steps: client {r['client_cpu_ms_per_1k']:5.0f} ms, server {r['server_cpu_ms_per_1k']:5.0f} ms",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default="target/release/toolenv", help="the toolenv binary (a release build)")
    parser.add_argument("--steps", type=int, default=60_000, help="env steps per configuration")
    parser.add_argument("--branching", action="store_true", help="GRPO-style groups instead of independent episodes")
    parser.add_argument("--group", type=int, default=8, help="continuations per branch point (--branching)")
    parser.add_argument("--million", action="store_true", help="a million steps at N=256, with memory every 100,000")
    parser.add_argument("--calls", choices=["unary", "streaming", "both"], default="both", help="unary CallTool, the CallTools stream, or both")
    parser.add_argument("--max-episodes", type=int, help="the server's --max-episodes (it keeps that many finished trajectories)")
    args = parser.parse_args()
    server, address = start_server(args.bin, ["--max-episodes", str(args.max_episodes)] if args.max_episodes else [])
    try:
        modes = {"unary": [False], "streaming": [True], "both": [False, True]}[args.calls]
        for streaming in modes:
            label = "streaming" if streaming else "unary"
            if args.million:
                show(f"vector {label} (1M steps)", asyncio.run(vector_run(address, 256, 1_000_000, server.pid, True, streaming)))
            elif args.branching:
                for n in (1, 8, 32):
                    show(f"branching x{args.group} {label}", asyncio.run(branching_run(address, n, args.group, args.steps, server.pid, streaming)))
            else:
                for n in (1, 64, 256):
                    steps = args.steps if n > 1 else args.steps // 10
                    show(f"vector {label}", asyncio.run(vector_run(address, n, steps, server.pid, streaming=streaming)))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
