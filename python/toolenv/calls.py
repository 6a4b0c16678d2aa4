"""Tools as chat templates take them, and a model's reply read as tool calls.

:func:`chat_tools` gives an episode's tools as the JSON list chat templates and
OpenAI-compatible APIs take (``tools=[{"type": "function", "function":
{...}}]``), with a ``finish`` tool to end the episode. :func:`parse_reply`
reads a model's reply by the same rules as toolenv's built-in LLM agents
(client/agents/src/llm/parse.rs), checked on the same cases
(examples/python/llm_call_cases.json). A reply is one of:

- ``("calls", form, [(call_id, name, arguments), ...])`` with form "native"
  (the API's tool_calls), "fenced_json", "bare_json" or "react_action";
- ``("final", text)``: no call, the model considers the task done;
- ``("malformed", reason)``: meant as a call but unreadable (or naming no known
  tool): an agent protocol error, to be told back to the model and counted,
  never taken as "done".

:func:`reply_actions` turns a reply into environment actions. Only the
standard library is used, so the Python worker can load this file alone.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

__all__ = ["FINISH_TOOL", "chat_tools", "parse_reply", "parse_text", "reply_actions"]

#: The tool a model calls to end the episode (the environments' ``finish`` action).
FINISH_TOOL = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": "End the task. Give the final answer if the task asks a question.",
        "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": []},
    },
}


def chat_tools(tools: Iterable[Any], *, finish: bool = True) -> List[dict]:
    """The tools as chat templates take them: ``[{"type": "function", "function": {"name",
    "description", "parameters"}}]``. ``tools`` are an observation's ``"tools"`` (dicts with
    ``parameters`` as JSON Schema) or the episode's ``ToolSpec`` messages."""
    listed = []
    for tool in tools:
        if isinstance(tool, Mapping):
            name, description, parameters = tool["name"], tool.get("description", ""), tool.get("parameters") or {"type": "object"}
        else:
            name, description, parameters = tool.name, tool.description, json.loads(tool.parameters_json_schema or "{}")
        listed.append({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
    if finish:
        listed.append(json.loads(json.dumps(FINISH_TOOL)))
    return listed


def reply_actions(reply: Tuple, *, final_finishes: bool = True) -> Optional[List[dict]]:
    """The environment actions of a parsed reply: its calls in order, ``finish`` for a
    final text (with the text as the answer, when ``final_finishes``), None for a
    malformed one (tell the model, as the built-in agents do)."""
    if reply[0] == "calls":
        return [{"tool": name, "arguments": arguments} for _, name, arguments in reply[2]]
    if reply[0] == "final":
        return [{"tool": "finish", "arguments": {"answer": reply[1]} if reply[1] else {}}] if final_finishes else []
    return None


CALL_MARKS = ('"name"', '"arguments"', '"tool"', '"parameters"', '"function"')
NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "action_input")


def parse_reply(message: Mapping[str, Any], tools: Sequence[str]) -> Tuple:
    """Reads an assistant message (``choices[0].message``: ``content`` and/or ``tool_calls``) against the tool names."""
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


def parse_text(text: str, tools: Sequence[str]) -> Tuple:
    """Reads calls written as text (fenced or bare JSON, ReAct's ``Action:`` lines)."""
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
