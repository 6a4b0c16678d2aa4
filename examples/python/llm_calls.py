"""Reading a model's reply as tool calls, however the model wrote them, and
posting to an OpenAI-compatible endpoint with retries.

The same rules as toolenv's built-in LLM agents (client/agents/src/llm/parse.rs),
kept in the toolenv package (python/toolenv/calls.py); llm_call_cases.json
beside this file holds the cases both must agree on (`python3 llm_calls.py`
checks them). A reply is one of:

- ("calls", form, [(call_id, name, arguments), ...]) with form "native"
  (the API's tool_calls), "fenced_json", "bare_json" or "react_action";
- ("final", text): no call, the model considers the task done;
- ("malformed", reason): meant as a call but unreadable (or naming no known
  tool): an agent protocol error, to be told back to the model and counted,
  never taken as "done".

Only the standard library is used.
"""

import importlib.util
import json
import os
import sys
import time
import urllib.error
import urllib.request

def _load_rules():
    """The reading rules of the toolenv package (toolenv/calls.py): the installed
    package's, else this checkout's file, loaded alone (it needs only the standard
    library, so `python3 llm_calls.py` works without the package)."""
    try:
        from toolenv import calls

        return calls
    except ImportError:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "toolenv", "calls.py")
        spec = importlib.util.spec_from_file_location("toolenv_calls", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


_rules = _load_rules()
parse_reply = _rules.parse_reply
parse_text = _rules.parse_text


def post_chat(base_url, key, body, attempts=6, timeout=300):
    """POSTs a chat-completions request; retries HTTP 408/409/429/5xx and
    connection failures with backoff, honouring retry-after-ms / Retry-After.
    Raises RuntimeError when the endpoint keeps failing: an infrastructure
    error, not the agent's failure."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode()
    last = "no attempt made"
    for attempt in range(attempts):
        advised = None
        try:
            request = urllib.request.Request(f"{base_url.rstrip('/')}/chat/completions", data, headers)
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            last = f"HTTP {error.code}"
            if error.code not in (408, 409, 429) and error.code < 500:
                break
            for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
                try:
                    advised = float(error.headers.get(header)) * scale
                    break
                except (TypeError, ValueError):
                    pass
        except (urllib.error.URLError, OSError) as error:
            last = f"connection failed: {error}"
        if attempt + 1 < attempts:
            time.sleep(min(60.0, advised if advised is not None else 0.5 * 2**attempt))
    raise RuntimeError(f"model endpoint {base_url}: {last} (after {attempt + 1} attempts)")


def _check_cases():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "llm_call_cases.json")) as f:
        shared = json.load(f)
    failures = 0
    for case in shared["cases"]:
        got = parse_reply(case["message"], shared["tools"])
        expect = case["expect"]
        if "calls" in expect:
            ok = got[0] == "calls" and got[1] == expect["calls"] and [[n, a] for _, n, a in got[2]] == expect["list"]
        elif "final" in expect:
            ok = got == ("final", expect["final"])
        else:
            ok = got[0] == "malformed"
        if not ok:
            failures += 1
            print(f"FAILED: {case['message']!r} gave {got!r}, expected {expect!r}")
    print(f"{len(shared['cases']) - failures} passed, {failures} failed")
    return failures == 0


if __name__ == "__main__":
    sys.exit(0 if _check_cases() else 1)
