"""Reading a model's reply as tool calls, however the model wrote them, and
posting to an OpenAI-compatible endpoint with retries.

The same rules as toolenv's built-in LLM agents (client/src/llm/parse.rs);
llm_call_cases.json beside this file holds the cases both must agree on
(`python3 llm_calls.py` checks them). A reply is one of:

- ("calls", form, [(call_id, name, arguments), ...]) with form "native"
  (the API's tool_calls), "fenced_json", "bare_json" or "react_action";
- ("final", text): no call, the model considers the task done;
- ("malformed", reason): meant as a call but unreadable (or naming no known
  tool): an agent protocol error, to be told back to the model and counted,
  never taken as "done".

Only the standard library is used.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

CALL_MARKS = ('"name"', '"arguments"', '"tool"', '"parameters"', '"function"')
NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "action_input")


def parse_reply(message, tools):
    """Reads an assistant message (choices[0].message) against the tool names."""
    calls = message.get("tool_calls") or []
    if calls:
        return _native(calls, tools)
    return parse_text(message.get("content") or "", tools)


def _native(calls, tools):
    parsed = []
    for call in calls:
        function = call.get("function") or call
        name = function.get("name")
        if not isinstance(name, str):
            return ("malformed", "a tool call has no function name")
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            arguments = {} if not arguments.strip() else _lenient(arguments)
            if arguments is None:
                return ("malformed", f"the arguments of {name} are not a JSON object")
        elif arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            return ("malformed", f"the arguments of {name} are not a JSON object")
        if name not in tools:
            return ("malformed", _unknown(name, tools))
        parsed.append((call.get("id"), name, arguments))
    return ("calls", "native", parsed)


def parse_text(text, tools):
    """Reads calls written as text."""
    action = _react_action(text, tools)
    if action is not None:
        return action
    fenced = _fenced_blocks(text)
    form, candidates = ("fenced_json", fenced) if fenced else ("bare_json", _json_objects(text))
    calls, meant, imagined = [], False, False
    for candidate in candidates:
        if imagined:
            break
        value = _lenient(candidate)
        if value is None:
            meant = meant or (form == "fenced_json" and _looks_like_call(candidate))
            continue
        for obj in _call_objects(value):
            if _made_up_result(obj):
                # The model imagined the call's result: what follows is its
                # imagined continuation, not calls.
                meant, imagined = True, True
                break
            call = _call_of(obj)
            if call is None:
                meant = meant or _looks_like_call(candidate)
                continue
            if call[0] not in tools:
                return ("malformed", _unknown(call[0], tools))
            calls.append((None, call[0], call[1]))
    if calls:
        return ("calls", form, calls)
    if meant or (candidates and _looks_like_call(text)):
        return ("malformed", 'the reply looks like a tool call but is not a JSON object with "name" and "arguments"')
    return ("final", text.strip())


RESULT_KEYS = ("result", "results", "output", "observation", "response", "return", "content")


def _made_up_result(obj):
    """Whether an object is a call's result the model wrote itself."""
    return isinstance(obj, dict) and (
        any(k in obj for k in RESULT_KEYS) or obj.get("role") in ("tool", "function", "ipython")
    )


def _call_objects(value):
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    if isinstance(value, dict):
        listed = value.get("tool_calls")
        return listed if isinstance(listed, list) else [value]
    return []


def _call_of(obj):
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None:
        return None
    arguments = next((obj[k] for k in ARGUMENT_KEYS if k in obj), None)
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = _lenient(arguments)
        if arguments is None:
            return None
    elif not isinstance(arguments, dict):
        return None
    return (name, arguments)


def _line_prefix(text, prefix):
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped[: len(prefix)].lower() == prefix:
            return offset + len(line) - len(stripped)
        offset += len(line)
    return None


def _react_action(text, tools):
    start = _line_prefix(text, "action:")
    if start is None:
        return None
    rest = text[start + len("action:"):]
    name_line, _, after = rest.partition("\n")
    name = name_line.strip().strip("`\"'").strip()
    if not name:
        return ("malformed", "an `Action:` line names no tool")
    if name not in tools:
        return ("malformed", _unknown(name, tools))
    at = _line_prefix(after, "action input:")
    arguments = {}
    if at is not None:
        raw = after[at + len("action input:"):]
        lower = raw.lower()
        ends = [i for i in (lower.find(k) for k in ("\nobservation:", "\nthought:", "\naction:")) if i >= 0]
        raw = raw[: min(ends)] if ends else raw
        blocks = _fenced_blocks(raw) or _json_objects(raw)
        value = _lenient(blocks[0]) if blocks else None
        if value is None:
            if raw.strip() not in ("", "{}"):
                return ("malformed", f"the `Action Input:` of {name} is not a JSON object")
            value = {}
        arguments = value
    return ("calls", "react_action", [(None, name, arguments)])


def _fenced_blocks(text):
    blocks, rest = [], text
    while "```" in rest:
        after = rest[rest.index("```") + 3:]
        newline = after.find("\n")
        body_start = len(after) if newline < 0 else newline + 1
        info = after[:body_start].strip()
        body = after[body_start:]
        close = body.find("```")
        body, rest = (body, "") if close < 0 else (body[:close], body[close + 3:])
        if info.startswith("{") and not body.strip():
            body = info
        if body.strip():
            blocks.append(body.strip())
    return blocks


def _json_objects(text):
    objects, i = [], 0
    while i < len(text):
        if text[i] != "{":
            i += 1
            continue
        depth, in_string, escaped, end = 0, False, False, None
        for j in range(i, len(text)):
            c = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j
                    break
        if end is None:
            objects.append(text[i:])
            break
        objects.append(text[i:end + 1])
        i = end + 1
    return objects


def _lenient(text):
    text = text.strip()
    for attempt in (text, _outer(text)):
        if attempt is None:
            continue
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    inner = _outer(text)
    if inner is None:
        return None
    try:
        value = json.loads(re.sub(r",(\s*[}\]])", r"\1", inner))
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _outer(text):
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    end = max(text.rfind("}"), text.rfind("]"))
    if not starts or end < min(starts):
        return None
    return text[min(starts): end + 1]


def _looks_like_call(text):
    lower = text.lower()
    return any(mark in lower for mark in CALL_MARKS)


def _unknown(name, tools):
    return f"there is no tool named '{name}'; the tools are: {', '.join(tools)}"


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
