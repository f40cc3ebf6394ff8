"""Structured output that never loops: ask with a JSON schema, repair once, then give up.

The schema goes to the backend's constrained decoding (Ollama's ``format``; llama.cpp's
JSON-schema grammar for the embedded model; ``response_format`` for OpenAI-compatible
servers), so a valid reply is the normal case even for a small model. What still fails to
parse or breaks a rule gets exactly one repair message; after that the caller takes its
deterministic fallback. Every attempt is recorded for the payload and the benchmark.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from local2.contracts import PlanAttempt
from local2.graph import Services, call_model
from local2.models import thinking_and_answer

T = TypeVar("T")
Validator = Callable[[Any], tuple[T | None, list[str]]]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass
class Attempt:
    raw: str
    schema_valid: bool  # the reply was JSON matching the schema
    errors: list[str] = field(default_factory=list)  # why it was not accepted ([] = accepted)
    # Where the JSON broke the schema (e.g. a description over its length): the validator
    # may still accept it, so a reply can be accepted and not schema-valid.
    schema_errors: list[str] = field(default_factory=list)
    accepted: bool = False


@dataclass
class Structured(Generic[T]):
    """The accepted value (None: use the fallback) and how it was obtained."""

    value: T | None
    attempts: list[Attempt]

    @property
    def source(self) -> str:
        """``model`` (first reply), ``repaired`` (after the repair message) or ``fallback``."""
        if self.value is None:
            return "fallback"
        return "model" if len(self.attempts) == 1 else "repaired"

    def summary(self) -> list[PlanAttempt]:
        return [
            {
                "accepted": a.accepted,
                "schema_valid": a.schema_valid,
                "schema_errors": a.schema_errors,
                "errors": a.errors,
                "chars": len(a.raw),
            }
            for a in self.attempts
        ]


def _is(model: Any, class_name: str) -> bool:
    return any(c.__name__ == class_name for c in type(model).__mro__)


def bind_schema(model: Any, schema: dict[str, Any], max_tokens: int) -> Any:  # a JSON schema
    """``model`` constrained to ``schema`` in the way its backend understands."""
    if _is(model, "ChatOllama"):
        return model.bind(format=schema)
    envelope = {
        "type": "json_schema",
        "json_schema": {"name": schema.get("title", "output"), "schema": schema, "strict": True},
    }
    if _is(model, "EmbeddedChatModel"):
        # Room for the whole grammar-bounded document, so it is never cut off mid-way.
        return model.bind(response_format=envelope, max_tokens=max_tokens)
    return model.bind(response_format=envelope)


def decode_json(text: str) -> tuple[Any, str | None]:
    """The JSON document in a reply (code fences and surrounding prose tolerated)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        first = body.find("{")
        last = body.rfind("}")
        if 0 <= first < last:
            try:
                return json.loads(body[first : last + 1]), None
            except json.JSONDecodeError:
                pass
        return None, f"the reply is not valid JSON ({exc.msg} at position {exc.pos})"


def schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:  # a JSON schema document
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or 'document'}: {e.message}"[:200]
        for e in validator.iter_errors(data)
    ][:6]


def repair_prompt(errors: list[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors[:8])
    return (
        "That reply cannot be used:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON document, following the same schema."
    )


def ask_structured(
    services: Services,
    messages: list[BaseMessage],
    schema: dict[str, Any],  # a JSON schema document
    validate: Validator[T],
    config: RunnableConfig | None = None,
) -> Structured[T]:
    """Ask for JSON matching ``schema``; accept what ``validate`` accepts; one repair at most."""
    bound = bind_schema(
        services.chat_model, schema, services.settings.research.structured_max_tokens
    )
    asking = dataclasses.replace(services, chat_model=bound)
    attempts: list[Attempt] = []
    conversation = list(messages)
    for _ in range(2):  # the request, then one repair
        reply = call_model(asking, conversation, config or {}, tools=False)
        _thinking, text = thinking_and_answer(reply)
        data, problem = decode_json(text)
        if problem is not None:
            attempts.append(Attempt(text, False, [problem]))
        else:
            broken = schema_errors(data, schema)
            value, errors = validate(data)
            accepted = value is not None and not errors
            attempts.append(Attempt(text, not broken, errors, broken, accepted))
            if accepted:
                return Structured(value, attempts)
        conversation += [AIMessage(text), HumanMessage(repair_prompt(attempts[-1].errors))]
    return Structured(None, attempts)
