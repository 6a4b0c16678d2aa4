#!/usr/bin/env python3
"""A toolenv worker in Python: plays the episodes of a run hosted by a server.

A run is a grid of planned episodes stored on the server (`toolenv host`
creates one). A worker asks the `toolenv.v1.Runs` service for the next
episode, plays it with `toolenv.v1.ToolEnv.CallTool`, and ends it with
`FinishEpisode`, which records the verdict in the run. Many workers, in any
language, can share a run; an episode whose worker goes quiet for the run's
lease timeout is handed to another one.

    pip install ./python            # the toolenv package (stubs generated from proto/)
    python examples/python/worker.py --url 127.0.0.1:50051 --run run-0001 \
        --label gpt-4o --policy llm --model gpt-4o

Policies (how an episode is played):
  llm     an OpenAI-compatible chat-completions model with function calling
          (OPENAI_API_KEY, OPENAI_BASE_URL); its token usage is reported with
          the finish call, and its cost too when --usd-per-mtok-in/out are set.
          The model ends with a `finish` tool whose parameters are a prose
          `answer` and, for a task with a typed answer (the episode's
          answer_schema_json), that answer's fields: the fields it fills go
          to FinishEpisode as answer_json (judged field by field), its prose
          as answer; a final reply with no tool call is the prose answer.
  replay  replays recorded calls per task from a JSON file
          {"task id": [{"tool": "...", "arguments": {...}}, ...]}, e.g. to
          judge calls an agent made elsewhere.

Every policy calls tools through `toolenv.Tools.call`, which retries what injected
faults break the way a production client would: transient statuses
(UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) after the server's
`grpc-retry-pushback-ms` trailer (never after -1) and declaring the wait in
the episode's virtual milliseconds (`waited_ms`: at time scale 0 only a
declared wait lets a rate-limit window pass), writes with an
idempotency key so a retry cannot apply twice, and a write whose reply is
empty or cut short counts as unconfirmed. What is left (domain errors, bad
calls, a suspension) goes back to the policy as text.

Built on the `toolenv` Python package (python/ in the repository): its
typed `Client` and its retrying `Tools`.
"""

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import grpc

from toolenv import Client, Tools, pb
from toolenv.client import answer_schema
from toolenv.env import FINISH, answer_fields, finish_answer, finish_tool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llm_calls  # noqa: E402  (beside this file)


def play_replay(tools, episode, calls_by_task):
    for call in calls_by_task.get(episode.task_id, []):
        tools.call(call["tool"], call.get("arguments", {}))
    return None


def instructions(episode, typed):
    """The system message: how to call tools and how to end, naming the typed answer's fields if the task has any."""
    fields = f" and every typed answer field ({', '.join(typed)}) filled with its exact value" if typed else ""
    return (
        f"You are an assistant that completes tasks with tools. Today is {episode.today}. "
        f"Call tools until the task is done, then call {FINISH} with your final answer to the user{fields}: "
        "what the task asks, with its exact values (identifiers, names, dates, times, amounts), or why it "
        "cannot be done. If you cannot use the tool-calling interface, "
        'write the call as a JSON object {"name": "<tool>", "arguments": {...}}.'
    )


def play_llm(tools, episode, args):
    """Plays with a chat-completions model; returns (input_tokens, output_tokens, answer, answer_json):
    the answer the model gave to `finish` (else the text beside that call, or its final reply with no
    tool call; None when it gave none) and the typed answer's fields it filled (a dict, or None)."""
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    key = os.environ.get("OPENAI_API_KEY")
    schema = answer_schema(episode)
    functions = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": json.loads(t.parameters_json_schema)},
        }
        for t in episode.tools
    ]
    functions.append(finish_tool(schema))
    names = [t.name for t in episode.tools] + [FINISH]
    messages = [
        {"role": "system", "content": instructions(episode, answer_fields(schema))},
        {"role": "user", "content": episode.description},
    ]
    tokens_in = tokens_out = 0
    answer = answer_json = None
    told = False
    while tools.calls < episode.max_calls:
        body = {"model": args.model, "messages": messages, "tools": functions}
        # An endpoint that keeps failing raises: an infrastructure error, not a verdict.
        reply = llm_calls.post_chat(base, key, body)
        usage = reply.get("usage") or {}
        tokens_in += usage.get("prompt_tokens", 0)
        tokens_out += usage.get("completion_tokens", 0)
        message = reply["choices"][0]["message"]
        messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        # Native tool_calls or calls written as text (llm_calls.py, the built-in agents' rules).
        parsed = llm_calls.parse_reply(message, names)
        if parsed[0] == "final":
            answer = parsed[1] or None
            break
        if parsed[0] == "malformed":
            tools.protocol_errors = getattr(tools, "protocol_errors", 0) + 1
            if told:
                break
            told = True
            messages.append({"role": "user", "content": f"Your last reply could not be read as a tool call: {parsed[1]}. "
                             'Use the tool-calling interface or write {"name": "<tool>", "arguments": {...}}.'})
            continue
        told = False
        _, form, calls = parsed
        observations, finished = [], False
        for call_id, name, arguments in calls:
            if name == FINISH:
                # The calls before finish are played; the ones after it are not.
                answer, answer_json = finish_answer(arguments, schema, strict=False)
                answer = answer or (message.get("content") or "").strip() or None
                finished = True
                break
            observations.append((call_id, name, tools.call(name, arguments)))
        if finished:
            break
        if form == "native":
            messages.extend({"role": "tool", "tool_call_id": i, "content": r} for i, _, r in observations)
        else:
            messages.append({"role": "user", "content": "\n".join(f"Observation ({n}): {r}" for _, n, r in observations)})
    return tokens_in, tokens_out, answer, answer_json


def open_channel(args):
    """A TLS channel when a CA is given or --tls is set; None for a plain one."""
    if not (args.ca_cert or args.tls):
        return None
    root = Path(args.ca_cert).read_bytes() if args.ca_cert else None
    target = args.url.split("://", 1)[-1]
    return grpc.secure_channel(target, grpc.ssl_channel_credentials(root_certificates=root))


def work(args, calls_by_task, name, totals, lock):
    # The token (`toolenv serve --token`) goes with every request.
    client = Client(args.url, token=args.token, channel=open_channel(args))
    while True:
        reply = client.next_episode(args.run, agent=args.label, worker=name)
        if not reply.HasField("lease"):
            if reply.retry_after_ms == 0:
                return  # nothing left for this label
            time.sleep(reply.retry_after_ms / 1000)  # others hold leases; one may expire
            continue
        episode = reply.lease.episode
        tools = Tools(client, episode)
        try:
            if args.policy == "llm":
                tokens_in, tokens_out, answer, answer_json = play_llm(tools, episode, args)
                cost = None
                if args.usd_per_mtok_in is not None and args.usd_per_mtok_out is not None:
                    cost = (tokens_in * args.usd_per_mtok_in + tokens_out * args.usd_per_mtok_out) / 1e6
                usage = pb.Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
            else:
                play_replay(tools, episode, calls_by_task)
                usage = answer = answer_json = None
            verdict = client.finish_episode(episode.episode_id, usage=usage, answer=answer, answer_json=answer_json)
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION and "lease expired" in (error.details() or ""):
                print(f"{name}: lease of episode {reply.lease.plan_index} expired; moving on", file=sys.stderr)
                continue
            raise
        with lock:
            totals["played"] += 1
            totals["passed"] += int(verdict.passed)
        mark = "pass" if verdict.passed else "FAIL"
        print(f"{name}: #{reply.lease.plan_index} {episode.task_id} {mark} ({tools.calls} calls, episode {episode.episode_id})", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the server, host:port (e.g. 127.0.0.1:50051)")
    parser.add_argument("--run", required=True, help="the run's id, e.g. run-0001")
    parser.add_argument("--token", default=os.environ.get("TOOLENV_TOKEN"), help="bearer token of a server started with --token (default: $TOOLENV_TOKEN)")
    parser.add_argument("--ca-cert", default=os.environ.get("TOOLENV_CA_CERT"), help="PEM CA to trust for a TLS server (implies TLS; default: $TOOLENV_CA_CERT)")
    parser.add_argument("--tls", action="store_true", help="connect with TLS trusting the system's roots")
    parser.add_argument("--label", default="", help="play only the episodes planned for this agent label (default: any)")
    parser.add_argument("--policy", choices=["llm", "replay"], default="llm")
    parser.add_argument("--model", default="gpt-4o-mini", help="the llm policy's model")
    parser.add_argument("--usd-per-mtok-in", type=float, help="input price per million tokens, to report cost")
    parser.add_argument("--usd-per-mtok-out", type=float, help="output price per million tokens, to report cost")
    parser.add_argument("--calls", help="the replay policy's JSON file of calls per task")
    parser.add_argument("--workers", type=int, default=1, help="worker threads, each leasing its own episodes")
    args = parser.parse_args()
    if args.policy == "replay" and not args.calls:
        parser.error("--policy replay needs --calls FILE")
    calls_by_task = json.loads(Path(args.calls).read_text()) if args.calls else {}

    # Checked before anything is leased: a worker that cannot play holds no lease.
    if args.policy == "llm" and not os.environ.get("OPENAI_API_KEY") and "OPENAI_BASE_URL" not in os.environ:
        sys.exit("error: the llm policy needs OPENAI_API_KEY (and OPENAI_BASE_URL for another provider)")
    totals, lock, failures = {"played": 0, "passed": 0}, threading.Lock(), []

    def run(index):
        # Any failure of a worker thread ends the process non-zero, never silently.
        try:
            work(args, calls_by_task, f"py-{os.getpid()}-{index}", totals, lock)
        except grpc.RpcError as error:
            failures.append(f"{error.code().name}: {error.details()}")
        except (Exception, SystemExit) as error:  # noqa: BLE001 (reported below)
            failures.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(max(args.workers, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"run": args.run, "played": totals["played"], "passed": totals["passed"]}))
    if failures:
        sys.exit(f"error: {failures[0]}")


if __name__ == "__main__":
    main()
