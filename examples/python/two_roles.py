#!/usr/bin/env python3
"""Two workers in two roles play the episodes of a multi-agent hosted run.

A run planned with roles (`toolenv host --roles planner,executor`) holds
multi-agent episodes: one worker per role joins each episode. Here a
planner and an executor, each a thread with its own gRPC channel, ask the
`toolenv.v1.Runs` service for episodes by role (`NextEpisodeRequest.role`:
a leased episode still missing that role comes first, so both land in the
same one), join it (`ToolEnv.JoinEpisode`) and talk over its message bus:

  planner   sends each step of a recorded solution to the executor as a plan
            message, waits for the result, and finishes the episode;
  executor  runs each plan it receives exactly once (deduplicated by message
            id, so a message storm does no harm) and reports the result.

When a reply is slow the planner re-reads its inbox from the same point
(a memory-loss fault may have pruned the reply) and sends the plan again
(it may have been pruned from the executor's inbox, or come back to the
planner itself: a message cycle); the executor runs a step once and answers
a repeated step with the result it already has. That recovery is
best-effort (a lost "done" keeps the executor waiting until the planner
finishes); the test suite runs this example under a message storm. Which steps to take comes from a JSON file
{"task id": [{"tool": "...", "arguments": {...}}, ...]} (as worker.py's
replay policy reads): the point is the two roles, not planning.

    pip install -r examples/python/requirements.txt
    toolenv host --url http://127.0.0.1:50051 --roles planner,executor --label team --domain travel --no-wait
    python examples/python/two_roles.py --url 127.0.0.1:50051 --run run-0001 --label team --calls calls.json

It is built on the toolenv package (python/), whose stubs are generated from proto/.
"""

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import grpc
from toolenv.v1 import toolenv_pb2 as pb
from toolenv.v1 import toolenv_pb2_grpc as pb_grpc

WAIT_S = 30.0
POLL_S = 0.01


class Finished(Exception):
    """The episode was finished (by another agent)."""


class Agent:
    """One agent in one episode: its calls carry its agent id."""

    def __init__(self, pb, env, episode_id, role):
        self.pb, self.env, self.episode_id = pb, env, episode_id
        joined = env.JoinEpisode(pb.JoinEpisodeRequest(episode_id=episode_id, role=role))
        self.id = joined.agent_id
        self.seq = 0  # inbox deliveries read so far

    def call(self, tool, arguments):
        """Calls a tool; returns ("result", value), ("error", code) or ("invalid", message)."""
        request = self.pb.CallToolRequest(
            episode_id=self.episode_id, tool_name=tool, arguments_json=json.dumps(arguments), agent_id=self.id, waited_ms=0
        )
        try:
            reply = self.env.CallTool(request)
        except grpc.RpcError as error:
            return "invalid", f"{error.code().name}: {error.details()}"
        if reply.WhichOneof("outcome") == "error":
            return "error", reply.error.code
        try:
            return "result", json.loads(reply.result_json)
        except ValueError:
            return "result", reply.result_json

    def send(self, to, body):
        return self.call("send_message", {"to": to, "body": json.dumps(body)})

    def inbox(self, after=None):
        """New messages (after the last read, or after `after`), bodies parsed."""
        kind, value = self.call("read_inbox", {"after_seq": self.seq if after is None else after})
        if kind == "invalid" and value.split(":")[0] in ("FAILED_PRECONDITION", "NOT_FOUND"):
            raise Finished()
        if kind != "result":
            return []
        self.seq = max(self.seq, value.get("last_seq", 0))
        messages = []
        for m in value.get("messages", []):
            try:
                m["body"] = json.loads(m["body"])
            except ValueError:
                pass
            messages.append(m)
        return messages


def planner(pb, env, episode, steps):
    me = Agent(pb, env, episode.episode_id, "planner")
    for step, call in enumerate(steps, start=1):
        plan = {"step": step, "plan": [call]}
        me.send("executor", plan)
        start, mark, done, resent = time.monotonic(), me.seq, False, 0
        last = start
        while not done and resent < 20 and time.monotonic() - start < WAIT_S:
            for m in me.inbox():
                body = m["body"]
                if not isinstance(body, dict) or body.get("step") != step:
                    continue
                if m["from"] == me.id and "plan" in body:
                    me.send("executor", plan)  # came back to us: send it again
                elif "result" in body:
                    done = True
            if not done:
                time.sleep(POLL_S)
                if time.monotonic() - last > 0.5:
                    last = time.monotonic()
                    found = any(
                        isinstance(m["body"], dict) and m["body"].get("step") == step and "result" in m["body"]
                        for m in me.inbox(after=mark)  # re-read from the same point: a pruned reply shows up again
                    )
                    if found:
                        done = True
                    else:
                        me.send("executor", plan)
                        resent += 1
    me.send("executor", {"done": True})
    return env.FinishEpisode(pb.FinishEpisodeRequest(episode_id=episode.episode_id))


def executor(pb, env, episode):
    me = Agent(pb, env, episode.episode_id, "executor")
    seen, results, start = set(), {}, time.monotonic()
    try:
        # Until the planner says it is done or finishes the episode, or goes quiet.
        while time.monotonic() - start < WAIT_S:
            for m in me.inbox():
                body = m["body"]
                if not isinstance(body, dict) or m["message_id"] in seen or m["from"] == me.id:
                    continue  # a copy of a message already handled (a message storm), or our own come back
                seen.add(m["message_id"])
                start = time.monotonic()
                if body.get("done"):
                    return
                if not body.get("plan"):
                    continue
                key = (m["from"], body.get("step"))
                if key not in results:
                    call = body["plan"][0]
                    results[key] = me.call(call["tool"], call.get("arguments", {}))
                if key in results:
                    kind, value = results[key]
                    me.send(m["from"], {"step": body.get("step"), "result": {"kind": kind, "value": value}})
            time.sleep(POLL_S)
    except Finished:
        return


def work(args, pb, pb_grpc, role, calls, results):
    channel = grpc.insecure_channel(args.url)
    runs, env = pb_grpc.RunsStub(channel), pb_grpc.ToolEnvStub(channel)
    while True:
        reply = runs.NextEpisode(pb.NextEpisodeRequest(run_id=args.run, agent=args.label, worker=f"two-roles-{role}", role=role))
        if not reply.HasField("lease"):
            if reply.retry_after_ms == 0:
                return
            time.sleep(reply.retry_after_ms / 1000)
            continue
        episode = reply.lease.episode
        if args.verbose:
            print(f"[{role}] plays {episode.task_id} ({episode.episode_id[:8]})", file=sys.stderr, flush=True)
        if role == "planner":
            verdict = planner(pb, env, episode, calls.get(episode.task_id, []))
            results.append((episode.task_id, verdict.passed))
            failed = "; ".join(f"{c.name}: expected {c.expected_json}, actual {c.actual_json}" for c in verdict.checks if not c.passed)
            print(f"{episode.task_id}: {'PASS' if verdict.passed else 'FAIL ' + failed}", flush=True)
        else:
            executor(pb, env, episode)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="server address, e.g. 127.0.0.1:50051")
    parser.add_argument("--run", required=True, help="the hosted run's id (planned with roles planner,executor)")
    parser.add_argument("--label", default="", help="the agent label to play (default: any)")
    parser.add_argument("--calls", required=True, help='JSON file {"task id": [{"tool": ..., "arguments": {...}}]}')
    parser.add_argument("--verbose", action="store_true", help="say which episode each role plays, on stderr")
    args = parser.parse_args()
    calls = json.loads(Path(args.calls).read_text())
    results = []
    threads = [threading.Thread(target=work, args=(args, pb, pb_grpc, role, calls, results)) for role in ("planner", "executor")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    passed = sum(1 for _, ok in results if ok)
    print(f"{passed}/{len(results)} episodes passed")


if __name__ == "__main__":
    main()
