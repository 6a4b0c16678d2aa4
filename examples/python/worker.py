#!/usr/bin/env python3
"""A toolenv worker in Python: plays the episodes of a run hosted by a server.

A run is a grid of planned episodes stored on the server (`toolenv host`
creates one). A worker asks the `toolenv.v1.Runs` service for the next
episode, plays it with `toolenv.v1.ToolEnv.CallTool`, and ends it with
`FinishEpisode`, which records the verdict in the run. Many workers, in any
language, can share a run; an episode whose worker goes quiet for the run's
lease timeout is handed to another one.

    pip install -r examples/python/requirements.txt
    python examples/python/worker.py --url 127.0.0.1:50051 --run run-0001 \
        --label gpt-4o --policy llm --model gpt-4o

Policies (how an episode is played):
  llm     an OpenAI-compatible chat-completions model with function calling
          (OPENAI_API_KEY, OPENAI_BASE_URL); its token usage is reported with
          the finish call, and its cost too when --usd-per-mtok-in/out are set.
  replay  replays recorded calls per task from a JSON file
          {"task id": [{"tool": "...", "arguments": {...}}, ...]}, e.g. to
          judge calls an agent made elsewhere.

Every policy calls tools through `Tools.call`, which retries what injected
faults break the way a production client would: transient statuses
(UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) after the server's
`grpc-retry-pushback-ms` trailer (never after -1) and declaring the wait in
the episode's virtual milliseconds (`waited_ms`: at time scale 0 only a
declared wait lets a rate-limit window pass), writes with an
idempotency key so a retry cannot apply twice, and a write whose reply is
empty or cut short counts as unconfirmed. What is left (domain errors, bad
calls, a suspension) goes back to the policy as text.

The gRPC stubs are generated from proto/ into --stubs on first use.
"""

import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.request
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]
TRANSIENT = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
MAX_ATTEMPTS = 8


def load_stubs(proto_dir, out_dir):
    """Generates the Python stubs of toolenv.proto (once per proto version) and imports them."""
    proto = Path(proto_dir) / "toolenv" / "v1" / "toolenv.proto"
    digest = hashlib.sha256(proto.read_bytes()).hexdigest()[:16]
    out = Path(out_dir) / digest
    if not (out / "toolenv" / "v1" / "toolenv_pb2_grpc.py").exists():
        from grpc_tools import protoc  # only needed to generate

        out.mkdir(parents=True, exist_ok=True)
        status = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={out}", f"--grpc_python_out={out}", str(proto)])
        if status != 0:
            sys.exit(f"error: generating stubs from {proto} failed (protoc exit {status})")
    sys.path.insert(0, str(out))
    from toolenv.v1 import toolenv_pb2, toolenv_pb2_grpc

    return toolenv_pb2, toolenv_pb2_grpc


class Tools:
    """An episode's tools, called with retries that honour the server's advice."""

    def __init__(self, stub, pb, episode):
        self.stub, self.pb, self.episode = stub, pb, episode
        self.mutating = {tool.name for tool in episode.tools if tool.mutates_state}
        self.time_scale = max(episode.time_scale, 0.0)
        self.calls = 0

    def call(self, tool, arguments):
        """Calls a tool; returns the text a model should read (a result, a domain error or a failure)."""
        self.calls += 1
        mutates = tool in self.mutating
        key = f"{self.episode.episode_id}-{self.calls}" if mutates else ""
        text, waited_ms = "", 0
        for attempt in range(MAX_ATTEMPTS):
            request = self.pb.CallToolRequest(
                episode_id=self.episode.episode_id,
                tool_name=tool,
                arguments_json=json.dumps(arguments),
                idempotency_key=key,
                waited_ms=waited_ms,
            )
            try:
                reply = self.stub.CallTool(request)
            except grpc.RpcError as error:
                text = json.dumps({"error": {"code": error.code().name, "message": error.details()}})
                if error.code() not in TRANSIENT:
                    return text  # a bad call, a suspension (PERMISSION_DENIED), a lost lease: do not retry
                pushback = dict(error.trailing_metadata() or ()).get("grpc-retry-pushback-ms")
                if pushback is not None and int(pushback) < 0:
                    return text  # the server says: do not retry
                waited_ms = self.backoff(attempt, None if pushback is None else int(pushback), virtual_retry_ms(error))
                continue
            if reply.WhichOneof("outcome") == "error":
                return json.dumps({"domain_error": {"code": reply.error.code, "message": reply.error.message}})
            text = reply.result_json
            fault = self.in_band_fault(text)
            if fault is not None:  # a fault delivered in-band, as an error object in an OK reply
                if fault.get("code") == "PERMISSION_DENIED" or fault.get("retry_after_ms") == -1:
                    return text
                waited_ms = self.backoff(attempt, fault.get("retry_after_ms"), fault.get("retry_after_virtual_ms"))
                continue
            if mutates and not self.confirmed(text):
                waited_ms = self.backoff(attempt, None, None)  # unconfirmed write: the key makes the retry safe
                continue
            return text
        return text

    @staticmethod
    def in_band_fault(text):
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            return None
        return error if isinstance(error, dict) and "reason" in error else None

    @staticmethod
    def confirmed(text):
        try:
            value = json.loads(text)
        except ValueError:
            return False  # cut short
        return value != {}

    def backoff(self, attempt, pushback_ms, virtual_ms):
        """Waits as advised (already in real time), else 1, 2, 4 … ms in the episode's time scale;
        returns the wait in the episode's virtual milliseconds, to declare with the retry."""
        if virtual_ms is None:
            virtual_ms = 2 ** min(attempt, 7)
            if pushback_ms is not None and self.time_scale > 0:
                virtual_ms = round(pushback_ms / self.time_scale)
        seconds = pushback_ms / 1000 if pushback_ms is not None else virtual_ms / 1000 * self.time_scale
        if seconds > 0:
            time.sleep(seconds)
        return max(int(virtual_ms), 0)


def _fields(data):
    """The length-delimited fields of an encoded protobuf message, as (number, bytes)."""
    def varint(i):
        value, shift = 0, 0
        while True:
            byte = data[i]
            value, shift, i = value | (byte & 0x7F) << shift, shift + 7, i + 1
            if byte < 0x80:
                return value, i

    i = 0
    while i < len(data):
        tag, i = varint(i)
        wire = tag & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 2:
            size, i = varint(i)
            yield tag >> 3, data[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            return


def virtual_retry_ms(error):
    """The advised retry delay in virtual milliseconds: the `retry_after_virtual_ms`
    metadata of the status's google.rpc.ErrorInfo detail, if any."""
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    for number, detail in _fields(details or b""):
        any_fields = dict(_fields(detail))
        if number != 3 or not any_fields.get(1, b"").endswith(b"google.rpc.ErrorInfo"):
            continue
        for field, entry in _fields(any_fields.get(2, b"")):
            pair = dict(_fields(entry))
            if field == 3 and pair.get(1) == b"retry_after_virtual_ms":
                return int(pair.get(2, b"0"))
    return None


def play_replay(tools, episode, calls_by_task):
    for call in calls_by_task.get(episode.task_id, []):
        tools.call(call["tool"], call.get("arguments", {}))
    return None


def play_llm(tools, episode, args):
    """Plays with a chat-completions model; returns (input_tokens, output_tokens)."""
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        sys.exit("error: the llm policy needs OPENAI_API_KEY (and OPENAI_BASE_URL for another provider)")
    functions = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": json.loads(t.parameters_json_schema)},
        }
        for t in episode.tools
    ]
    messages = [
        {"role": "system", "content": f"You are an assistant that completes tasks with tools. Today is {episode.today}. "
         "Call tools until the task is done, then answer briefly."},
        {"role": "user", "content": episode.description},
    ]
    tokens_in = tokens_out = 0
    while tools.calls < episode.max_calls:
        body = json.dumps({"model": args.model, "messages": messages, "tools": functions}).encode()
        request = urllib.request.Request(
            f"{base}/chat/completions", body, {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            reply = json.load(response)
        usage = reply.get("usage") or {}
        tokens_in += usage.get("prompt_tokens", 0)
        tokens_out += usage.get("completion_tokens", 0)
        message = reply["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            try:
                arguments = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                arguments = {}
            result = tools.call(call["function"]["name"], arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return tokens_in, tokens_out


class Bearer(grpc.UnaryUnaryClientInterceptor):
    """Adds `authorization: Bearer <token>` to every call (`toolenv serve --token`)."""

    def __init__(self, token):
        self.metadata = (("authorization", f"Bearer {token}"),)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(details._replace(metadata=tuple(details.metadata or ()) + self.metadata), request)


def open_channel(args):
    """A channel to the server: TLS when a CA is given or --tls is set, and the token if any."""
    if args.ca_cert or args.tls:
        root = Path(args.ca_cert).read_bytes() if args.ca_cert else None
        channel = grpc.secure_channel(args.url, grpc.ssl_channel_credentials(root_certificates=root))
    else:
        channel = grpc.insecure_channel(args.url)
    return grpc.intercept_channel(channel, Bearer(args.token)) if args.token else channel


def work(args, pb, pb_grpc, calls_by_task, name, totals, lock):
    channel = open_channel(args)
    runs, env = pb_grpc.RunsStub(channel), pb_grpc.ToolEnvStub(channel)
    while True:
        reply = runs.NextEpisode(pb.NextEpisodeRequest(run_id=args.run, agent=args.label, worker=name))
        if not reply.HasField("lease"):
            if reply.retry_after_ms == 0:
                return  # nothing left for this label
            time.sleep(reply.retry_after_ms / 1000)  # others hold leases; one may expire
            continue
        episode = reply.lease.episode
        tools = Tools(env, pb, episode)
        try:
            if args.policy == "llm":
                tokens_in, tokens_out = play_llm(tools, episode, args)
                cost = None
                if args.usd_per_mtok_in is not None and args.usd_per_mtok_out is not None:
                    cost = (tokens_in * args.usd_per_mtok_in + tokens_out * args.usd_per_mtok_out) / 1e6
                usage = pb.Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
            else:
                play_replay(tools, episode, calls_by_task)
                usage = None
            verdict = env.FinishEpisode(pb.FinishEpisodeRequest(episode_id=episode.episode_id, usage=usage))
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION and "lease expired" in (error.details() or ""):
                print(f"{name}: lease of episode {reply.lease.plan_index} expired; moving on", file=sys.stderr)
                continue
            raise
        with lock:
            totals["played"] += 1
            totals["passed"] += int(verdict.passed)
        mark = "pass" if verdict.passed else "FAIL"
        print(f"{name}: #{reply.lease.plan_index} {episode.task_id} {mark} ({tools.calls} calls)", file=sys.stderr)


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
    parser.add_argument("--proto", default=str(ROOT / "proto"), help="the directory holding toolenv/v1/toolenv.proto")
    parser.add_argument("--stubs", default=str(Path(__file__).resolve().parent / "generated"), help="where stubs are generated")
    args = parser.parse_args()
    if args.policy == "replay" and not args.calls:
        parser.error("--policy replay needs --calls FILE")
    calls_by_task = json.loads(Path(args.calls).read_text()) if args.calls else {}
    pb, pb_grpc = load_stubs(args.proto, args.stubs)

    totals, lock, failures = {"played": 0, "passed": 0}, threading.Lock(), []

    def run(index):
        try:
            work(args, pb, pb_grpc, calls_by_task, f"py-{os.getpid()}-{index}", totals, lock)
        except grpc.RpcError as error:
            failures.append(f"{error.code().name}: {error.details()}")

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
