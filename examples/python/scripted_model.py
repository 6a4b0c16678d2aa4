"""A scripted OpenAI-compatible chat-completions endpoint, for playing the
agent-framework examples without a model: over a real socket, it answers
each POST /v1/chat/completions with the next tool call of a script (a JSON
list of {"tool": NAME, "arguments": {...}}), then with a final message.

Stateless: the next step is the number of tool results in the request, so
any client, retrying or not, gets the same play. Only the standard library.

    python examples/python/scripted_model.py calls.json --port 8011
    # prints http://127.0.0.1:8011/v1 and serves until interrupted
"""

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply(script, request, final="Done."):
    """The chat completion answering `request` under `script`."""
    messages = request.get("messages", [])
    step = sum(1 for m in messages if m.get("role") == "tool")
    offered = {t.get("function", {}).get("name") for t in request.get("tools") or []}
    if step < len(script):
        call = script[step]
        if call["tool"] not in offered:
            raise ValueError(f"the script calls {call['tool']!r}, but the request offers {sorted(offered)}")
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{step}",
                    "type": "function",
                    "function": {"name": call["tool"], "arguments": json.dumps(call["arguments"])},
                }
            ],
        }
        finish_reason = "tool_calls"
    else:
        message = {"role": "assistant", "content": final}
        finish_reason = "stop"
    return {
        "id": f"chatcmpl-scripted-{step}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


class ScriptedModel:
    """The endpoint, serving on a thread; `base_url` is what a client is given."""

    def __init__(self, script, host="127.0.0.1", port=0):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    if not self.path.endswith("/chat/completions"):
                        raise LookupError(self.path)
                    request = json.loads(body)
                    outer.requests.append(request)
                    status, answer = 200, reply(script, request)
                except LookupError as error:
                    status, answer = 404, {"error": {"message": f"no such route {error}"}}
                except (ValueError, KeyError) as error:
                    status, answer = 400, {"error": {"message": str(error)}}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.base_url = f"http://{host}:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("script", help="a JSON file: [{\"tool\": NAME, \"arguments\": {...}}, ...]")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with open(args.script) as f:
        script = json.load(f)
    with ScriptedModel(script, port=args.port) as model:
        print(model.base_url, flush=True)
        try:
            model.thread.join()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
