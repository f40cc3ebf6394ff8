"""Which tools a research step may call, and what each one is to the run.

Any tool whose declared effects only read (``Tool.effects``, overridden by ``tools.read_only``
and ``tools.side_effecting``) may serve as a step, except those ``research.exclude_tools``
names (memory holds what the person said, not sources). Nothing here is specific to a tool's
name: what the run needs is read off the tool's own metadata and JSON schema.

- A **finder** lists sources without reading them: it takes a ``query`` and is a search
  (``web_search``) or a listing (``evidence: listing``, as ``search_files``). A later step
  may read "the top results" of a finder step (``from_step`` + ``top``).
- A **reader** reads the one source an argument names, its **target**: the URL argument it
  declares (``url_arg``: ``web_fetch``'s ``url``), or, for a tool that reads the person's
  own data (``output: private``), its one required text argument (``read_file``'s ``path``,
  a document tool's file). A reader of URLs reads what a web search found; a reader of files
  reads what a listing of files found.
- Any other read-only tool (a read-only MCP tool) is called with its arguments, and its whole
  result is one source.

A step's arguments are checked against its tool's own JSON schema (:meth:`StepTools.check`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from local2.config import ToolsSettings
from local2.tools import Tool

if TYPE_CHECKING:
    from local2.graph import Services

FROM_STEP = "from_step"  # a reader's pseudo-arguments: read the top results of that step
TOP = "top"
MAX_TOP = 5
SEARCH_NAMES = frozenset({"web_search"})  # searches whose results are web pages
DEFAULT_EXCLUDED = ("recall_memory",)
_URL_ARGS = frozenset({"url", "uri", "href"})
_TEXT_TYPES = ("string",)


# What a reader of URLs reads: a web page, or a document of an offline corpus (corpus://,
# which web_search lists and web_fetch reads with no connection: local2.tools.corpus).
_URL = re.compile(r"(?:https?|corpus)://[^\s/]+", re.IGNORECASE)


def is_url(label: str) -> bool:
    return bool(_URL.match(label.strip()))


@dataclass(frozen=True)
class StepTool:
    """One tool as a research step sees it."""

    name: str
    description: str
    parameters: dict[str, Any]  # the tool's arguments as a JSON schema document
    finder: bool = False  # lists sources (hits) a reader can read
    finds_urls: bool = False  # a finder whose hits are web pages
    target: str | None = None  # a reader: the argument naming the source it reads
    takes_urls: bool = False  # a reader of URLs (web pages)
    output: str = "untrusted"

    @property
    def properties(self) -> dict[str, Any]:  # its JSON schema's properties
        props = self.parameters.get("properties")
        return dict(props) if isinstance(props, Mapping) else {}

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required")
        return [str(r) for r in req] if isinstance(req, list) else []

    def can_read(self, label: str) -> bool:
        """Whether this reader can read a source a finder found under ``label``."""
        return self.target is not None and is_url(label) == self.takes_urls

    def label(self, args: Mapping[str, Any]) -> str:
        """The name of the source a call reads: its target, else the call itself."""
        if self.target and isinstance(args.get(self.target), str):
            return str(args[self.target]).strip()
        shown = ", ".join(f"{k}={v}" for k, v in sorted(args.items()) if v not in (None, ""))
        return f"{self.name}({shown})"


def _target(tool: Tool) -> str | None:
    """The argument naming the source a reader reads: the URL it requests, or the one text
    argument of a tool that reads the person's own files and documents."""
    if tool.url_arg:
        return tool.url_arg
    if tool.output != "private":
        return None
    props = tool.parameters.get("properties") or {}
    required = [str(r) for r in tool.parameters.get("required") or []]
    texts = [
        r
        for r in required
        if r != "query" and (props.get(r) or {}).get("type", "string") in _TEXT_TYPES
    ]
    return texts[0] if len(texts) == 1 else None


def step_tool(tool: Tool) -> StepTool:
    """What ``tool`` is to a research step (see the module docstring)."""
    props = tool.parameters.get("properties") or {}
    searches = "query" in props and (tool.name in SEARCH_NAMES or tool.evidence == "listing")
    target = None if searches else _target(tool)
    return StepTool(
        name=tool.name,
        description=tool.description,
        parameters=dict(tool.parameters),
        finder=searches,
        finds_urls=searches and (tool.name in SEARCH_NAMES or tool.output == "untrusted"),
        target=target,
        takes_urls=target is not None and (tool.url_arg is not None or target in _URL_ARGS),
        output=tool.output,
    )


def reads_only(tool: Tool, settings: ToolsSettings | None) -> bool:
    """Declared to read without writing (config may say otherwise, by name)."""
    if settings is not None:
        if tool.name in settings.side_effecting:
            return False
        if tool.name in settings.read_only:
            return True
    return tool.effects == "read"


@dataclass(frozen=True)
class StepTools:
    """The tools a run's steps may call, in the order they are offered."""

    tools: dict[str, StepTool] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        tools: Iterable[Tool],
        settings: ToolsSettings | None = None,
        exclude: Sequence[str] = DEFAULT_EXCLUDED,
    ) -> StepTools:
        kept = [t for t in tools if reads_only(t, settings) and t.name not in exclude]
        return cls({t.name: step_tool(t) for t in kept})

    def names(self) -> list[str]:
        return list(self.tools)

    def get(self, name: str) -> StepTool | None:
        return self.tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def finders(self) -> list[StepTool]:
        return [t for t in self.tools.values() if t.finder]

    def search(self) -> StepTool | None:
        """The finder a plan made without the model searches with (the web's first)."""
        finders = self.finders()
        return next((t for t in finders if t.finds_urls), finders[0] if finders else None)

    def reader_for(self, finder: StepTool) -> StepTool | None:
        """The reader that reads what ``finder`` finds."""
        return next(
            (
                t
                for t in self.tools.values()
                if t.target is not None and t.takes_urls == finder.finds_urls
            ),
            None,
        )

    def args_schema(self, text_chars: int, url_chars: int) -> dict[str, Any]:  # JSON schema
        """The ``args`` object a plan is requested with: every tool's arguments (bounded, so
        a small model's reply stays short) and a reader's ``from_step`` / ``top``."""
        props: dict[str, Any] = {}  # JSON schema properties
        for tool in self.tools.values():
            for name, spec in tool.properties.items():
                if name in props or name in (FROM_STEP, TOP) or not isinstance(spec, Mapping):
                    continue
                kind = spec.get("type", "string")
                if kind == "string":
                    limit = url_chars if name in _URL_ARGS or name == tool.target else text_chars
                    props[name] = {"type": "string", "maxLength": limit}
                elif kind in ("integer", "number", "boolean"):
                    props[name] = {"type": kind}
        if any(t.target for t in self.tools.values()) and self.finders():
            props[FROM_STEP] = {"type": "string", "maxLength": 8}
            props[TOP] = {"type": "integer", "enum": list(range(1, MAX_TOP + 1))}
        return {"type": "object", "properties": props, "additionalProperties": False}

    def check(self, tool_name: str, args: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``args`` for ``tool_name``, against the tool's own JSON schema
        (a reader's target may come from ``from_step`` instead)."""
        import jsonschema

        tool = self.tools.get(tool_name)
        if tool is None:
            return [f"unknown tool {tool_name!r}"]
        own = {k: v for k, v in args.items() if k not in (FROM_STEP, TOP)}
        if FROM_STEP in args and not tool.target:
            return [f"{tool_name} reads no results of another step: it takes no args.from_step"]
        props = tool.properties
        unknown = [k for k in own if k not in props]
        if unknown:
            takes = ", ".join(props) or "no arguments"
            return [f"a {tool_name} step takes no args.{unknown[0]} (it takes: {takes})"]
        schema = dict(tool.parameters)
        if FROM_STEP in args:  # the target comes from the step it reads
            schema["required"] = [r for r in tool.required if r != tool.target]
        missing = [r for r in schema.get("required") or [] if own.get(r) in (None, "")]
        if missing:
            return [f"a {tool_name} step needs args.{missing[0]}"]
        validator = jsonschema.Draft202012Validator(schema)
        errors = [
            f"args.{'.'.join(map(str, e.absolute_path)) or '(all)'}: {e.message}"[:200]
            for e in validator.iter_errors(own)
        ]
        if errors:
            return errors[:3]
        if tool.takes_urls and tool.target in own:
            value = str(own[tool.target]).strip()
            if not is_url(value):
                return [f"args.{tool.target} {value!r} is not an http(s) URL (or a corpus:// one)"]
        return []


_MADE: dict[int, tuple[object, object, StepTools]] = {}  # by id of the tools: the last few


def step_catalog(services: Services) -> StepTools:
    """The tools of ``services`` a step may call (see the module docstring); worked out
    once for a set of tools and settings (every step boundary asks)."""
    settings = services.settings
    made = _MADE.get(id(services.tools))
    if made is not None and made[0] is services.tools and made[1] is settings:
        return made[2]
    catalog = StepTools.of(services.tools.values(), settings.tools, settings.research.exclude_tools)
    if len(_MADE) > 64:
        _MADE.clear()
    _MADE[id(services.tools)] = (services.tools, settings, catalog)
    return catalog
