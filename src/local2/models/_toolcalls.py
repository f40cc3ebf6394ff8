"""Tool calls that small models write as text instead of native ``tool_calls``.

Small models often print their calls: Hermes/Qwen ``<tool_call>`` tags, LFM2
``<|tool_call_start|>``, Mistral ``[TOOL_CALLS]``, Llama ``<|python_tag|>`` or a pythonic
``[fn(a='x')]``, or a bare JSON object. This module finds them in that order, checks the
arguments against the tool's schema (:func:`validate_args`, below) and returns the
prose that is left. Model output is untrusted: it is read with ``json`` and
``ast.literal_eval`` on single argument nodes only, never evaluated, and a name that is not a
registered tool is never a call.

A tool call's arguments, checked against the tool's JSON schema, and the one message
that tells a model how to repair a call that could not be used.

Small models slip in small ways (a number as a string, an invented extra key, ``null`` for
an optional argument): those are fixed in place; what is still wrong becomes a readable
error, and the model gets one chance to repair it.

Tools for a model that cannot call them natively: described in its prompt, called in text.

The embedded demo model and Ollama models whose capabilities lack ``tools`` get the tool list
in their system prompt and are asked to write ``<tool_call>{json}</tool_call>``; the graph's
text parser reads the calls. Their earlier calls are shown back in that same written form
and tool results as user turns, since such models were not trained on a ``tool`` role
(Ollama's templates for them drop it).

The wording lives here once, so the answer guard can recognise a model that echoes it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from local2.contracts import PendingCall
from local2.ids import new_call_id

# Each tool's JSON schema by name, as the tool (or its MCP server) wrote it: outside data.
Schemas = Mapping[str, dict[str, Any]]  # each tool's arguments as a JSON schema document

_TYPE_OF: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _coerce(value: Any, kind: Any) -> Any:
    """Fix the obvious slips (``"3"`` for an integer, ``"true"``); leave the rest to the schema."""
    if not isinstance(kind, str) or kind not in _TYPE_OF:
        return value
    if kind in ("integer", "number") and isinstance(value, bool):
        return value
    if isinstance(value, _TYPE_OF[kind]) and not (kind == "string" and isinstance(value, bool)):
        return value
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
            return int(value)
    if kind == "number" and isinstance(value, str):
        try:
            return float(value) if re.search(r"[.eE]", value) else int(value)
        except ValueError:
            return value
    if kind == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if kind in ("array", "object") and isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, _TYPE_OF[kind]) else value
    return value


# args as the model wrote them (JSON), checked against the tool's JSON schema document
def validate_args(args: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Check ``args`` against a JSON schema; return readable errors (empty when valid).

    ``args`` is fixed in place first: obvious type slips are coerced, ``None`` values are
    dropped, and keys the schema does not list are removed (small models invent extras),
    unless the schema explicitly allows additional properties.
    """
    props = schema.get("properties")
    dropped: list[str] = []
    if isinstance(props, dict) and props:
        extra_ok = bool(schema.get("additionalProperties"))
        for key in list(args):
            if args[key] is None or (key not in props and not extra_ok):
                if args.pop(key) is not None:
                    dropped.append(key)
            elif key in props and isinstance(props[key], dict):
                args[key] = _coerce(args[key], props[key].get("type"))
    errors: list[str] = []
    for name in schema.get("required", []):
        value = args.get(name)
        if name not in args:
            errors.append(f"missing required argument '{name}'")
        elif isinstance(value, str) and not value.strip():
            errors.append(f"argument '{name}' is empty")
    try:
        validator = jsonschema.Draft202012Validator(schema)
        found = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    except jsonschema.SchemaError as exc:  # a broken tool schema is not the model's fault
        return [*errors, f"tool schema is invalid: {exc.message}"]
    for err in found:
        if err.validator == "required":
            continue  # reported above, in the wording the repair message uses
        where = ".".join(str(p) for p in err.path)
        errors.append(f"argument '{where}': {err.message}" if where else err.message)
    if errors:  # only worth saying when the call failed anyway
        errors += [f"unknown argument '{key}'" for key in dropped]
    return errors


REPAIR_HEADER = "Your tool call could not be used:"
REPAIR_TOOLS_LINE = "Tools and their arguments (* = required):"


def repair_message(errors: list[str], tools: Schemas) -> str:
    """One message telling the model what was wrong and how a correct call looks."""
    named = [n for n in tools if any(e.startswith(f"{n}:") for e in errors)]
    lines = [REPAIR_HEADER]
    lines += [f"- {e}" for e in errors] or ["- the call could not be read"]
    lines.append("")
    lines.append(
        "To call a tool, reply with only one JSON object per call, inside tags: "
        '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>'
    )
    lines.append(REPAIR_TOOLS_LINE)
    for name in named or list(tools):
        lines.append(f"- {name}({_signature(tools[name])})")
    lines.append("Or, if no tool is needed, answer the question directly.")
    return "\n".join(lines)


def _signature(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for key, spec in props.items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(f"{key}{'*' if key in required else ''}: {kind}")
    return ", ".join(parts)


TOOLS_HEADER = "You can use these tools:"
CALL_TEMPLATE = (
    '<tool_call>{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}</tool_call>'
)
CALL_INSTRUCTION = "To use a tool, reply with only this and nothing else:"
ANSWER_INSTRUCTION = "Otherwise answer the user directly."
RESULT_PREFIX = "Result of {name}:"


def message_text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = [p if isinstance(p, str) else p.get("text", "") for p in content]
    return "\n".join(p for p in parts if p)


# tools: OpenAI function schemas (JSON schema documents), as LangChain binds them
def describe_tools(tools: Sequence[dict[str, Any]]) -> str:
    """A compact tool list and the exact call format, sized for a small model's attention."""
    lines = [TOOLS_HEADER]
    for tool in tools:
        function = tool.get("function", tool)
        props = (function.get("parameters") or {}).get("properties") or {}
        args = ", ".join(f"{name}: {spec.get('type', 'any')}" for name, spec in props.items())
        description = (function.get("description") or "").strip().splitlines()
        lines.append(f"- {function['name']}({args}): {description[0] if description else ''}")
    lines.append(f"{CALL_INSTRUCTION}\n{CALL_TEMPLATE}\n{ANSWER_INSTRUCTION}")
    return "\n".join(lines)


def written_call(name: str, args: dict[str, Any]) -> str:  # args as the model wrote them
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


def prompted_messages(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]] | None = None,  # OpenAI function schemas (JSON schema)
) -> list[BaseMessage]:
    """``messages`` for a model without native tools: one leading system turn (plus the tool
    list when ``tools``), earlier calls as written calls, tool results as user turns."""
    system = [message_text(m.content) for m in messages if isinstance(m, SystemMessage)]
    if tools:
        system.append(describe_tools(tools))
    text = "\n\n".join(s for s in system if s)
    out: list[BaseMessage] = [SystemMessage(text)] if text else []
    call_names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AIMessage):
            written = message_text(message.content)
            for call in message.tool_calls:
                call_names[call.get("id") or ""] = call["name"]
                written += written_call(call["name"], call["args"])
            out.append(AIMessage(written))
        elif isinstance(message, ToolMessage):
            name = message.name or call_names.get(message.tool_call_id, "tool")
            result = message_text(message.content)
            out.append(HumanMessage(f"{RESULT_PREFIX.format(name=name)}\n{result}"))
        else:
            out.append(message)
    return out


@dataclass
class ParsedToolCalls:
    """What a model's text asked for: valid calls, leftover prose, and broken calls."""

    calls: list[PendingCall] = field(default_factory=list)
    text: str = ""
    errors: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- scanning


@dataclass
class _Raw:
    """One call as written, before its arguments are checked."""

    name: str
    args: Any


@dataclass
class _Found:
    """What one parsing stage found: spans of text it consumed, raw calls and errors."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    raws: list[_Raw] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.raws or self.errors)


_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_PARSE_ERRORS = (ValueError, SyntaxError, TypeError, RecursionError, MemoryError)


_MAX_ERRORS = 8
_MAX_CALL_CHARS = 20_000  # no single call is longer; brackets are not matched further
_SCAN_BUDGET = 400_000  # characters a stage may scan, so hostile text cannot go quadratic


def _balanced_end(text: str, start: int, stop: int | None = None) -> int | None:
    """Index just past the bracket that closes ``text[start]``, honouring quoted strings."""
    stack: list[str] = []
    quote: str | None = None
    i = start
    stop = len(text) if stop is None else min(stop, len(text))
    while i < stop:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in "}])":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


class _Matcher:
    """Bracket matching over one text with a total budget (stages 2 and 3 try many starts)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.budget = _SCAN_BUDGET

    def end(self, start: int) -> int | None:
        if self.budget <= 0:
            return None
        stop = start + min(_MAX_CALL_CHARS, self.budget)
        end = _balanced_end(self.text, start, stop)
        self.budget -= (end or min(stop, len(self.text))) - start
        return end


def _load_literal(src: str) -> Any:
    """JSON first, then a Python literal (single-quoted dicts); raise ValueError if neither."""
    try:
        return json.loads(src)
    except ValueError:
        pass
    try:
        return ast.literal_eval(src.strip())
    except _PARSE_ERRORS as exc:
        raise ValueError(str(exc)) from None


_ARG_KEYS = ("arguments", "parameters", "args")


def _json_call(obj: Any) -> tuple[str, Any] | None:
    """``(name, args)`` if ``obj`` is shaped like a call, else None."""
    if not isinstance(obj, dict):
        return None
    fn = obj.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        obj = fn
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    key = next((k for k in _ARG_KEYS if k in obj), None)
    if key is None:
        return None
    args = obj[key]
    # A tool *definition* ({"name", "description", "parameters": {schema}}) is not a call.
    if "description" in obj or (
        isinstance(args, dict) and args.get("type") == "object" and "properties" in args
    ):
        return None
    return name, args


def _json_items(value: Any) -> list[Any]:
    """The call-shaped objects in a decoded JSON value: one object, a list, or tool_calls."""
    if isinstance(value, list):
        return value
    calls = value.get("tool_calls") if isinstance(value, dict) else None
    if isinstance(calls, list):
        return calls
    return [value]


# --------------------------------------------------------------------------- pythonic


def _call_name(node: ast.AST) -> str | None:
    """``fn`` for ``fn(...)`` and ``fn.call(...)`` (Llama built-in tool style)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "call":
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


# the arguments as the model wrote them (Python literals), for the tool's JSON schema
def _pythonic_args(node: ast.Call, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments of one call node, each via ``ast.literal_eval``; ValueError if not literal."""
    args: dict[str, Any] = {}  # as the model wrote them
    order = list((schema.get("properties") or {}).keys())
    if len(node.args) > len(order):
        raise ValueError("too many positional arguments")
    for key, arg in zip(order, node.args, strict=False):
        args[key] = ast.literal_eval(arg)
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError("**kwargs is not allowed")
        args[kw.arg] = ast.literal_eval(kw.value)
    return args


def _pythonic_calls(src: str) -> list[tuple[str, ast.Call]]:
    """Call nodes in ``src`` (one call, a list/tuple of calls, or calls on separate lines)."""
    tree = ast.parse(src.strip())
    nodes: list[ast.expr] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr):
            raise ValueError("not a function call")
        value = stmt.value
        nodes.extend(value.elts if isinstance(value, ast.List | ast.Tuple) else [value])
    found: list[tuple[str, ast.Call]] = []
    for node in nodes:
        name = _call_name(node)
        if name is None or not isinstance(node, ast.Call):
            raise ValueError("not a function call")
        found.append((name, node))
    if not found:
        raise ValueError("no function call")
    return found


# --------------------------------------------------------------------------- stage 1: tags

_OPEN = re.compile(r"<tool_call>|<\|tool_call_start\|>|<\|python_tag\|>|\[TOOL_CALLS\]")
_CLOSE = {
    "<tool_call>": ("</tool_call>",),
    "<|tool_call_start|>": ("<|tool_call_end|>",),
    "<|python_tag|>": ("<|eom_id|>", "<|eot_id|>"),
    "[TOOL_CALLS]": ("</s>",),
}
_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.S)
_MISTRAL_ARGS = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?\[ARGS\]")


def _tag_segments(text: str) -> Iterator[tuple[int, int, int, int, bool]]:
    """``(start, end, body_start, body_end, closed)`` for each tagged call; a missing closing
    tag runs to the next opening tag or the end of the text."""
    opens = list(_OPEN.finditer(text))
    for i, m in enumerate(opens):
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        body_end, end, closed = limit, limit, False
        for close in _CLOSE[m.group()]:
            pos = text.find(close, m.end(), limit)
            if pos != -1 and pos < body_end:
                body_end, end, closed = pos, pos + len(close), True
        yield m.start(), end, m.end(), body_end, closed


_PY_CALL_START = re.compile(r"[A-Za-z_]\w*(?:\.call)?\s*\(")


def _parse_tagged_body(body: str, tools: Schemas, found: _Found) -> str:
    """Read one tag's content: JSON value(s), Mistral ``name[ARGS]{...}`` or pythonic calls.

    Returns the text after the calls that was not part of them (prose a model wrote after
    forgetting the closing tag), or "".
    """
    body = body.strip()
    fence = _FENCE.match(body)
    if fence:
        body = fence.group(1).strip()
    if not body:
        found.errors.append("empty tool call")
        return ""
    if _MISTRAL_ARGS.match(body):
        return _parse_mistral_args(body, found)
    if body[0] in "{[":
        try:
            values, stop = _json_prefix(body)
        except ValueError as exc:
            if body[0] == "{":
                found.errors.append(f"tool call is not valid JSON ({exc}): {_short(body)}")
                return ""
        else:
            for item in (i for v in values for i in _json_items(v)):
                call = _json_call(item)
                if call is None:
                    found.errors.append(
                        'tool call must be {"name": ..., "arguments": {...}}, got: '
                        + _short(json.dumps(item, ensure_ascii=False, default=str))
                    )
                else:
                    found.raws.append(_Raw(*call))
            return body[stop:]
    nodes, tail = _pythonic_prefix(body)
    if nodes is None:
        found.errors.append(f"tool call could not be read: {_short(body)}")
        return ""
    for name, node in nodes:
        try:
            found.raws.append(_Raw(name, _pythonic_args(node, tools.get(name, {}))))
        except (ValueError, SyntaxError, TypeError) as exc:
            found.errors.append(f"{name}: arguments must be literal values ({exc})")
    return tail


def _pythonic_prefix(body: str) -> tuple[list[tuple[str, ast.Call]] | None, str]:
    """Calls in ``body``, or in its leading ``[...]`` / ``fn(...)`` with the rest as a tail."""
    try:
        return _pythonic_calls(body), ""
    except _PARSE_ERRORS:
        pass
    m = _PY_CALL_START.match(body)
    opener = 0 if body[0] == "[" else (m.end() - 1 if m else None)
    end = _balanced_end(body, opener) if opener is not None else None
    if end is None:
        return None, ""
    try:
        return _pythonic_calls(body[:end]), body[end:]
    except _PARSE_ERRORS:
        return None, ""


def _json_prefix(body: str) -> tuple[list[Any], int]:
    """JSON (or Python-literal) values at the start of ``body``, separated by whitespace, ``,``
    or ``;``, and where they stop. ValueError if not even the first one can be read."""
    values: list[Any] = []
    pos = stop = 0
    while True:
        while pos < len(body) and body[pos] in " \t\r\n,;":
            pos += 1
        if pos >= len(body) or body[pos] not in "{[":
            break
        end = _balanced_end(body, pos)
        if end is None:
            if values:
                break
            raise ValueError("unbalanced brackets")
        try:
            values.append(_load_literal(body[pos:end]))
        except ValueError:
            if values:
                break
            raise
        pos = stop = end
    if not values:
        raise ValueError(f"no JSON value: {_short(body)}")
    return values, stop


def _parse_mistral_args(body: str, found: _Found) -> str:
    """Mistral's newer form: ``name[ARGS]{...}``, possibly several in a row; returns the tail."""
    pos = 0
    while pos < len(body):
        m = _MISTRAL_ARGS.match(body, pos)
        if not m:
            return body[pos:]
        start = m.end()
        while start < len(body) and body[start].isspace():
            start += 1
        end = _balanced_end(body, start) if body[start : start + 1] == "{" else None
        if end is None:
            found.errors.append(f"{m.group(1)}: arguments are not a JSON object")
            return ""
        try:
            found.raws.append(_Raw(m.group(1), _load_literal(body[start:end])))
        except ValueError as exc:
            found.errors.append(f"{m.group(1)}: arguments are not valid JSON ({exc})")
        pos = end
    return ""


def _stage_tags(text: str, tools: Schemas) -> _Found:
    found = _Found()
    for start, end, body_start, body_end, closed in _tag_segments(text):
        raw = text[body_start:body_end]
        tail = _parse_tagged_body(raw, tools, found).strip()
        at = raw.rfind(tail) if tail else -1
        if not closed and at != -1:  # prose after a call whose closing tag is missing
            end = body_start + at
        found.spans.append((start, end))
    return found


# --------------------------------------------------------------------------- stage 2: JSON

_FENCED = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*```", re.M | re.S)
_CALL_FENCES = {"", "json", "jsonc", "json5", "tool_code", "tool_call", "tool", "function_call"}


def _code_regions(text: str) -> list[tuple[int, int]]:
    """Fenced blocks in a programming language: JSON there is code, not a call."""
    return [m.span(2) for m in _FENCED.finditer(text) if m.group(1).lower() not in _CALL_FENCES]


def _stage_json(text: str, tools: Schemas) -> _Found:
    """JSON objects (or lists of them) naming a registered tool, anywhere in the text."""
    found = _Found()
    if not any(f'"{n}"' in text or f"'{n}'" in text for n in tools):
        return found  # cheap exit: no quoted tool name, so no JSON call
    code = _code_regions(text)
    match = _Matcher(text)
    names = "|".join(re.escape(n) for n in tools)
    intent = re.compile(rf"""\{{\s*["'](?:name|function)["']\s*:\s*["']({names})["']""")
    pos = 0
    while names:
        starts = [p for p in (text.find("{", pos), text.find("[", pos)) if p != -1]
        if not starts:
            break
        start = min(starts)
        end = match.end(start)
        value: Any = None
        if end is not None:
            try:
                value = _load_literal(text[start:end])
            except ValueError:
                value = None
        calls = [c for c in map(_json_call, _json_items(value)) if c and c[0] in tools]
        if end is not None and calls and not any(s <= start < e for s, e in code):
            found.spans.append((start, end))
            found.raws.extend(_Raw(*c) for c in calls)
            pos = end
            continue
        bad = intent.match(text, start)
        if bad and end is None:  # clearly meant as a call, but the JSON breaks off
            stop = end or len(text)
            found.spans.append((start, stop))
            found.errors.append(
                f"{bad.group(1)}: tool call is not valid JSON: {_short(text[start:stop])}"
            )
            pos = stop
            continue
        pos = start + 1
    return found


# --------------------------------------------------------------------------- stage 3: pythonic


def _stage_pythonic(text: str, tools: Schemas) -> _Found:
    """``[fn(a='x')]`` anywhere, or ``fn(a='x')`` standing on its own line."""
    found = _Found()
    if not tools:
        return found
    names = "|".join(re.escape(n) for n in tools)
    call_re = re.compile(rf"(?<![\w.])(?:{names})(?:\.call)?\s*\(")
    taken: list[tuple[int, int]] = []
    match = _Matcher(text)
    for m in re.finditer(rf"\[\s*(?:{names})(?:\.call)?\s*\(", text):
        end = match.end(m.start())
        if end is None or any(s <= m.start() < e for s, e in taken):
            continue
        raws = _literal_calls(text[m.start() : end], tools)
        if raws:
            taken.append((m.start(), end))
            found.raws.extend(raws)
    for m in call_re.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        end = match.end(m.end() - 1)
        if end is None or not _own_line(text, m.start(), end):
            continue
        raws = _literal_calls(text[m.start() : end], tools)
        if raws:
            taken.append((m.start(), end))
            found.raws.extend(raws)
    found.spans = sorted(_widen_to_line(text, s, e) for s, e in taken)
    return found


def _literal_calls(src: str, tools: Schemas) -> list[_Raw]:
    """All calls in ``src`` if every one names a tool and has literal arguments, else []."""
    try:
        nodes = _pythonic_calls(src)
        if not all(name in tools for name, _ in nodes):
            return []
        return [_Raw(name, _pythonic_args(node, tools[name])) for name, node in nodes]
    except _PARSE_ERRORS:
        return []


def _own_line(text: str, start: int, end: int) -> bool:
    """True when the call is the whole line, allowing backticks, a bullet or a semicolon."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    before = text[line_start:start].strip(" \t`>-*")
    after = text[end:line_end].strip(" \t`;")
    return not before and not after


def _widen_to_line(text: str, start: int, end: int) -> tuple[int, int]:
    """Swallow backticks wrapped tightly around a call, so no empty ```` `` ```` is left."""
    while start > 0 and text[start - 1] == "`" and end < len(text) and text[end] == "`":
        start, end = start - 1, end + 1
    return start, end


# --------------------------------------------------------------------------- assembly

_NOISE = re.compile(
    r"<\|eot_id\|>|<\|eom_id\|>|<\|im_end\|>|<\|end\|>|<\|endoftext\|>|</s>"
    r"|</tool_call>|<\|tool_call_end\|>"
)
_EMPTY_FENCE = re.compile(r"```[\w-]*\s*```")


def _leftover(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with call spans removed and the markup they leave behind cleaned up."""
    if not spans:
        return _NOISE.sub("", text).strip()
    pieces, pos = [], 0
    for start, end in sorted(spans):
        if start < pos:
            continue
        pieces.append(text[pos:start])
        pos = end
    pieces.append(text[pos:])
    out = pieces[0]
    for piece in pieces[1:]:
        if out.endswith((" ", "\t")) and piece.startswith((" ", "\t")):
            piece = piece.lstrip(" \t")
        out += piece
    out = _EMPTY_FENCE.sub("", _NOISE.sub("", out))
    out = re.sub(r"[ \t]+\n", "\n", out)
    return re.sub(r"\n{3,}", "\n\n", out).strip()


def _short(s: str, limit: int = 120) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _finish(raws: list[_Raw], tools: Schemas) -> tuple[list[PendingCall], list[str]]:
    """Check names and arguments; keep one copy of repeated identical calls."""
    calls: list[PendingCall] = []
    errors: list[str] = []
    seen: set[str] = set()
    for raw in raws:
        if raw.name not in tools:
            errors.append(f"unknown tool '{raw.name}'; available: {', '.join(tools) or 'none'}")
            continue
        args = raw.args
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                errors.append(f"{raw.name}: arguments must be a JSON object, got: {_short(args)}")
                continue
        if not isinstance(args, dict):
            errors.append(f"{raw.name}: arguments must be a JSON object, got: {_short(repr(args))}")
            continue
        args = dict(args)
        problems = validate_args(args, tools[raw.name])
        if problems:
            errors.extend(f"{raw.name}: {p}" for p in problems)
            continue
        key = json.dumps([raw.name, args], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            calls.append({"name": raw.name, "args": args, "id": new_call_id()})
    return calls, errors


def parse_tool_calls(text: str, tools: Schemas) -> ParsedToolCalls:
    """Find the tool calls a model wrote as text.

    ``tools`` maps each registered tool name to the JSON schema of its parameters. Stages run
    in order and the first that finds anything (calls or broken calls) wins: tagged text, then
    JSON naming a registered tool, then pythonic calls.
    """
    text = text or ""
    for stage in (_stage_tags, _stage_json, _stage_pythonic):
        found = stage(text, tools)
        if found:
            raw_calls, raw_errors = found.raws, found.errors
            calls, errors = _finish(raw_calls, tools)
            errors = [*raw_errors, *errors]
            if len(errors) > _MAX_ERRORS:  # one short repair message, not a wall of text
                errors = [*errors[:_MAX_ERRORS], f"... and {len(errors) - _MAX_ERRORS} more"]
            return ParsedToolCalls(calls, _leftover(text, found.spans), errors)
    return ParsedToolCalls([], _leftover(text, []), [])
