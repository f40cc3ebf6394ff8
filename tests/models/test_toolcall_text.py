"""Text tool calls of small models: fixtures per model family, validation and repair."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from local2.models._toolcalls import (
    ParsedToolCalls,
    parse_tool_calls,
    repair_message,
    validate_args,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "toolcalls"

TOOLS: dict[str, dict[str, Any]] = {
    "web_search": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
    "web_fetch": {
        "type": "object",
        "properties": {"url": {"type": "string"}},
        "required": ["url"],
    },
    "recall_memory": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
        "required": ["query"],
    },
    "save_memory": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
CALL_ID = re.compile(r"^call_[0-9a-f]{8}$")


def _load(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((FIXTURES / f"{name}.yaml").read_text("utf-8"))


CALL_FAMILIES = sorted(
    p.stem for p in FIXTURES.glob("*.yaml") if p.stem not in ("no_call", "errors")
)
CALL_CASES = [
    pytest.param(case, id=f"{fam}-{i}")
    for fam in CALL_FAMILIES
    for i, case in enumerate(_load(fam))
]
NO_CALL_CASES = [pytest.param(c, id=f"no_call-{i}") for i, c in enumerate(_load("no_call"))]
ERROR_CASES = [pytest.param(c, id=f"errors-{i}") for i, c in enumerate(_load("errors"))]


def _pairs(parsed: ParsedToolCalls) -> list[tuple[str, dict]]:
    return [(c["name"], c["args"]) for c in parsed.calls]


def test_fixture_set_is_big_enough() -> None:
    assert len(CALL_FAMILIES) >= 6
    for fam in CALL_FAMILIES:
        assert len(_load(fam)) >= 10, fam
    assert len(NO_CALL_CASES) >= 40


@pytest.mark.parametrize("case", CALL_CASES)
def test_family_case_gives_exact_calls_and_leftover(case: dict[str, Any]) -> None:
    parsed = parse_tool_calls(case["text"], TOOLS)
    assert parsed.errors == []
    assert _pairs(parsed) == [(c["name"], c["args"]) for c in case["calls"]]
    assert parsed.text == case["leftover"]
    ids = [c["id"] for c in parsed.calls]
    assert all(CALL_ID.match(i) for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", NO_CALL_CASES)
def test_prose_without_a_call_yields_nothing(case: dict[str, Any]) -> None:
    parsed = parse_tool_calls(case["text"], TOOLS)
    assert parsed.calls == []
    assert parsed.errors == []
    assert parsed.text == case["text"].strip()


@pytest.mark.parametrize("case", ERROR_CASES)
def test_broken_call_is_an_error_not_a_call(case: dict[str, Any]) -> None:
    parsed = parse_tool_calls(case["text"], TOOLS)
    assert parsed.calls == []
    for expected in case["errors"]:
        assert any(expected in e for e in parsed.errors), (expected, parsed.errors)
    assert parsed.text == ""


def test_pythonic_arguments_are_never_evaluated(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payloads = [
        f"[web_search(query=__import__('os').system('touch {marker}'))]",
        f"<|tool_call_start|>[web_search(query=open('{marker}', 'w').write('x'))]<|tool_call_end|>",
        f"web_fetch(url=__import__('pathlib').Path('{marker}').touch())",
        f"<|python_tag|>web_search.call(**{{'query': open('{marker}', 'w')}})",
    ]
    for text in payloads:
        parsed = parse_tool_calls(text, TOOLS)
        assert parsed.calls == []
    assert not marker.exists()


def test_unregistered_names_are_never_calls() -> None:
    only_search = {"web_search": TOOLS["web_search"]}
    tagged = parse_tool_calls(
        '<tool_call>{"name": "web_fetch", "arguments": {"url": "https://a.example"}}</tool_call>',
        only_search,
    )
    assert tagged.calls == []
    assert tagged.errors == ["unknown tool 'web_fetch'; available: web_search"]
    for text in (
        '{"name": "web_fetch", "arguments": {"url": "https://a.example"}}',
        "[web_fetch(url='https://a.example')]",
        "web_fetch(url='https://a.example')",
    ):
        parsed = parse_tool_calls(text, only_search)
        assert (parsed.calls, parsed.errors, parsed.text) == ([], [], text)
    assert parse_tool_calls("[web_search(query='x')]", {}).calls == []


def test_a_list_with_one_unknown_tool_is_not_a_pythonic_call() -> None:
    parsed = parse_tool_calls("[web_search(query='a'), rm_rf(path='/')]", TOOLS)
    assert parsed.calls == []


def test_tagged_calls_win_over_json_in_the_prose() -> None:
    text = (
        'Example: {"name": "web_search", "arguments": {"query": "wrong"}}\n'
        '<tool_call>{"name": "web_search", "arguments": {"query": "right"}}</tool_call>'
    )
    parsed = parse_tool_calls(text, TOOLS)
    assert _pairs(parsed) == [("web_search", {"query": "right"})]
    assert parsed.text == 'Example: {"name": "web_search", "arguments": {"query": "wrong"}}'


def test_valid_and_invalid_calls_in_one_reply_are_split() -> None:
    text = (
        '<tool_call>{"name": "web_search", "arguments": {"query": "ok"}}</tool_call>\n'
        '<tool_call>{"name": "recall_memory", "arguments": {"k": 2}}</tool_call>'
    )
    parsed = parse_tool_calls(text, TOOLS)
    assert _pairs(parsed) == [("web_search", {"query": "ok"})]
    assert parsed.errors == ["recall_memory: missing required argument 'query'"]


def test_empty_and_plain_text() -> None:
    assert parse_tool_calls("", TOOLS) == ParsedToolCalls([], "", [])
    assert parse_tool_calls("  Paris.<|eot_id|>", TOOLS) == ParsedToolCalls([], "Paris.", [])


def test_shipped_config_schemas_parse_a_call() -> None:
    from local2.config import load_settings
    from tests.kit.helpers import tool_schemas

    enabled = load_settings().generator.enabled_tools
    tools = {name: schema for name, schema in tool_schemas().items() if name in enabled}
    parsed = parse_tool_calls(
        '<tool_call>{"name": "recall_memory", "arguments": {"query": "cats", "k": "3"}}',
        tools,
    )
    assert _pairs(parsed) == [("recall_memory", {"query": "cats", "k": 3})]


# ----------------------------------------------------------------------------- validate_args


@pytest.mark.parametrize(
    ("kind", "given", "want"),
    [
        ("integer", "3", 3),
        ("integer", " -7 ", -7),
        ("integer", 4.0, 4),
        ("number", "2.5", 2.5),
        ("number", "2", 2),
        ("boolean", "true", True),
        ("boolean", "False", False),
        ("string", 2026, "2026"),
        ("array", '["a", "b"]', ["a", "b"]),
        ("object", '{"a": 1}', {"a": 1}),
    ],
)
def test_validate_args_coerces_obvious_slips(kind: str, given: Any, want: Any) -> None:
    schema = {"type": "object", "properties": {"x": {"type": kind}}, "required": ["x"]}
    args = {"x": given}
    assert validate_args(args, schema) == []
    assert args == {"x": want}
    assert type(args["x"]) is type(want)


@pytest.mark.parametrize(
    ("kind", "given"),
    [("integer", "three"), ("integer", 2.5), ("integer", True), ("boolean", "yes"), ("array", "a")],
)
def test_validate_args_rejects_what_cannot_be_coerced(kind: str, given: Any) -> None:
    schema = {"type": "object", "properties": {"x": {"type": kind}}}
    errors = validate_args({"x": given}, schema)
    assert len(errors) == 1
    assert errors[0].startswith("argument 'x': ")
    assert kind in errors[0]


def test_validate_args_required_empty_extra_and_enum() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "mode": {"enum": ["fast", "deep"]}},
        "required": ["q"],
    }
    args = {"q": "cats", "limit": 3, "mode": None}
    assert validate_args(args, schema) == []
    assert args == {"q": "cats"}  # unknown key and None dropped
    assert validate_args({}, schema) == ["missing required argument 'q'"]
    assert validate_args({"q": "  "}, schema) == ["argument 'q' is empty"]
    errs = validate_args({"q": "x", "mode": "slow"}, schema)
    assert errs == ["argument 'mode': 'slow' is not one of ['fast', 'deep']"]
    assert validate_args({"query": "x"}, schema) == [
        "missing required argument 'q'",
        "unknown argument 'query'",
    ]


def test_validate_args_keeps_extra_keys_when_schema_allows_them() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": True,
    }
    args = {"q": "x", "lang": "de"}
    assert validate_args(args, schema) == []
    assert args == {"q": "x", "lang": "de"}


# ----------------------------------------------------------------------------- repair_message


def test_repair_message_names_the_errors_and_the_right_signature() -> None:
    parsed = parse_tool_calls(
        '<tool_call>{"name": "recall_memory", "arguments": {"k": "lots"}}</tool_call>', TOOLS
    )
    msg = repair_message(parsed.errors, TOOLS)
    for err in parsed.errors:
        assert f"- {err}" in msg
    assert "recall_memory(query*: string, k: integer)" in msg
    assert "web_fetch(" not in msg  # only the tool that failed
    assert '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>' in msg


def test_repair_message_lists_all_tools_when_the_call_named_none() -> None:
    msg = repair_message(["tool call could not be read: <tool_call>foo"], TOOLS)
    for name in TOOLS:
        assert f"- {name}(" in msg
    assert "web_fetch(url*: string)" in msg
    # the repaired call a model would write from this message parses cleanly
    fixed = parse_tool_calls(
        '<tool_call>{"name": "web_fetch", "arguments": {"url": "https://a.example"}}</tool_call>',
        TOOLS,
    )
    assert _pairs(fixed) == [("web_fetch", {"url": "https://a.example"})]


@pytest.mark.parametrize(
    "text",
    [
        'x { y [ z ( "web_search" ' * 1500,
        "[web_search(" * 5000,
        "\n".join(['web_search("' + "a" * 5] * 3000),
        "<|tool_call_start|>[web_search(" * 3000,
    ],
)
def test_hostile_text_is_parsed_quickly_with_few_errors(text: str) -> None:
    t0 = time.perf_counter()
    parsed = parse_tool_calls(text, TOOLS)
    assert time.perf_counter() - t0 < 2.0
    assert parsed.calls == []
    assert len(parsed.errors) <= 9
