"""A tool call's arguments, checked against the tool's JSON schema, and the one message
that tells a model how to repair a call that could not be used.

Small models slip in small ways (a number as a string, an invented extra key, ``null`` for
an optional argument): those are fixed in place; what is still wrong becomes a readable
error, and the model gets one chance to repair it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jsonschema

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
