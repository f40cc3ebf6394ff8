"""Brains for the fake Ollama server: what the fake model says to a request.

A brain is ``brain(request_json) -> Reply``. ``RuleBrain`` is a deterministic stand-in for a
tool-calling model used by the acceptance stories; ``ScriptBrain`` replays exact replies;
``LoopBrain`` never stops calling tools, for the loop guard.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from local2_testkit.brain_memory import (
    answer_from_memory,
    extraction_reply,
    is_extraction,
    second_person,
    split_memory,
)

ThinkMode = Literal["field", "inline", "none"]


@dataclass
class Reply:
    """What the fake model answers to one request.

    The optional fields override the server's behaviour for this reply only, so a script can
    make exactly one response slow, dropped or failing.
    """

    content: str = ""
    thinking: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # calls in Ollama's JSON shape
    done_reason: str = "stop"
    think_mode: ThinkMode | None = None
    drop_after_chunks: int | None = None
    delay_s: float | None = None
    chunk_delay_s: float | None = None  # between NDJSON lines (a slow stream)
    error: str | None = None  # answer with HTTP ``status`` and ``{"error": error}`` instead
    status: int = 500


Brain = Callable[[dict[str, Any]], "Reply | str"]  # a brain answers a request body (Ollama's JSON)


# --------------------------------------------------------------------------- request helpers


def tool_names(request: Mapping[str, Any]) -> list[str]:
    """Names of the tools offered in an ``/api/chat`` request, in order."""
    names = []
    for tool in request.get("tools") or []:
        function = tool.get("function") or {}
        if function.get("name"):
            names.append(str(function["name"]))
    return names


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else json.dumps(content)


def last_user_index(messages: Sequence[Mapping[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return -1


# (name, arguments as the model wrote them)
def call_parts(call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(name, arguments)`` of a tool call in Ollama's shape or the short one."""
    function = call.get("function", call)
    args = function.get("arguments") or {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"raw": args}
    return str(function.get("name", "")), dict(args)


_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")


def find_urls(text: str) -> list[str]:
    """URLs in order of appearance, trailing punctuation removed, without duplicates."""
    seen: dict[str, None] = {}
    for match in _URL.findall(text):
        seen.setdefault(match.rstrip(".,;:!?"), None)
    return list(seen)


# --------------------------------------------------------------------------- brains


_FAVOURITE = re.compile(
    r"\bmy\s+favou?rite\s+([\w ]{1,40}?)\s+(?:is|are)\s+([^?.!\n]{1,60}?)\s*(?:[.!\n]|$)",
    re.IGNORECASE,
)
_SEARCH_WORDS = re.compile(
    r"\b(news|this week|latest|current price|today's|top result|search the web)\b", re.I
)
_FETCH_WORDS = re.compile(r"\b(fetch|summari[sz]e|read)\b", re.I)
_PERSONAL = re.compile(r"\b(?:I|I'm|I've|my|we|our)\b", re.I)
_REMEMBER_THAT = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that\b|:)(?![^?]*\?\s*$)", re.I
)
_RECALL_WORDS = re.compile(r"\b(what did i tell you|remember|earlier|last time)\b", re.I)
_TOP_RESULT = re.compile(r"summari[sz]e\b.*\btop result", re.I | re.S)
_GIL = re.compile(r"\bGIL\b|global interpreter lock", re.I)
_WHY_IT = re.compile(r"\bwhy\b.*\bit\b.*\bintroduced\b", re.I)
_NOISE_LINE = re.compile(
    r"^(?:today's date:|url:|extracted text:|<<<|<[^<>]*>$|[-=*#_`]{3,}$|\[\d+\]\s*$"
    r"|\[tool output below|\[canned results|sha256:|chars: \d|lines: \d|\[document:"
    r"|\[(?:page|slide|chapter)s? \d|document: |(?:pages|slides|chapters): \d|\(more: )",
    re.I,
)
_LABEL = re.compile(r"^(?:\[\d+\]\s*)?(?:title|snippet|content):\s*", re.I)
_OWN_FILES = re.compile(r"\bmy (?:own )?(?:notes?|files?|documents?|docs)\b", re.I)
_FILE_HIT = re.compile(
    r"([\w./ ()-]*?[\w.()-]+\.(?:md|txt|json|csv|py|yaml|pdf|docx|pptx|odt|epub|html))\b"
    r"(?:, (?:page|slide|chapter) (\d+))?"
)
_PAGE_MARKER = re.compile(r"^\[Page (\d+)(?: of \d+)?\]$", re.M)
_FAILURE = re.compile(r"^\s*\[(?:tool error|tool timeout|unknown tool)", re.I)

GENERIC_MARKER = "I have no specific rule for that"
HEDGE_MARKER = "I don't know"


def _pages(text: str) -> list[tuple[int, str]]:
    """A document's text split at its ``[Page N]`` markers."""
    found = list(_PAGE_MARKER.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)] if found else []
    return [(int(m.group(1)), text[m.end() : end]) for m, end in zip(found, ends, strict=True)]


def _best_page(pages: list[tuple[int, str]], question: str) -> tuple[int, str]:
    """The page sharing the most words with the question (the first among equals)."""
    wanted = {w for w in re.findall(r"\w+", question.lower()) if len(w) > 3}
    return max(pages, key=lambda p: len(wanted & set(re.findall(r"\w+", p[1].lower()))))


_DOCUMENTS = re.compile(r"\A\[Documents [^\n]*\]\n<documents>\n(.*?)\n</documents>\s*", re.S)
_PASSAGE = re.compile(r"^(\S[^\n]*\(score [\d.]+\)):\n", re.M)


# chat messages in Ollama's JSON
def _last_batch(turn: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The last round's tool results as ``(tool, text)``, each named by its message or by
    the call it answers."""
    last_calls: list[dict[str, Any]] = []  # chat messages in Ollama's JSON
    results: list[dict[str, Any]] = []  # chat messages in Ollama's JSON
    for message in reversed(turn):
        if message.get("role") == "tool":
            results.insert(0, message)
        else:
            last_calls = list(message.get("tool_calls") or [])
            break
    names = [call_parts(c)[0] for c in last_calls]
    return [
        (m.get("tool_name") or (names[i] if i < len(names) else "tool"), message_text(m))
        for i, m in enumerate(results)
    ]


def split_documents(text: str) -> tuple[list[tuple[str, str]], str]:
    """``(passages, rest)``: the attached documents' block as ``(heading, text)`` pairs."""
    found = _DOCUMENTS.match(text)
    if not found:
        return [], text
    body = found.group(1)
    heads = list(_PASSAGE.finditer(body))
    ends = [h.start() for h in heads[1:]] + [len(body)] if heads else []
    passages = [(h.group(1), body[h.end() : e].strip()) for h, e in zip(heads, ends, strict=True)]
    return passages, text[found.end() :]


def _overlap(text: str, question: str) -> int:
    wanted = {w for w in re.findall(r"\w+", question.lower()) if len(w) > 3}
    return len(wanted & set(re.findall(r"\w+", text.lower())))


def _best_sentence(text: str, question: str) -> str:
    """The sentence of ``text`` sharing the most words with the question."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return _best_page(list(enumerate(sentences)), question)[1]


def meaningful_lines(text: str, limit: int = 3) -> list[str]:
    """The first lines of a tool result that carry content (labels and fences removed)."""
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or _NOISE_LINE.match(line) or len(re.findall(r"\w+", line)) < 2:
            continue
        lines.append(_LABEL.sub("", line))
        if len(lines) == limit:
            break
    return lines


def _favourites(texts: Iterable[str]) -> list[tuple[str, str]]:
    found = []
    for text in texts:
        found += [(m.group(1).strip(), m.group(2).strip()) for m in _FAVOURITE.finditer(text)]
    return found


class RuleBrain:
    """A deterministic stand-in for a tool-calling model, with readable rules.

    It never answers what it could not know: tool results drive the answers after a tool
    call, pronouns resolve only when the history holds their referent, and only offered tools
    are called. ``tool_style="text"`` writes calls as ``<tool_call>{json}</tool_call>`` text,
    the way small models do, instead of native ``tool_calls``.
    """

    def __init__(self, *, tool_style: Literal["native", "text"] = "native") -> None:
        self.tool_style = tool_style

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply:
        # an Ollama request body, as a client sent it (JSON)
        messages: list[dict[str, Any]] = list(request.get("messages") or [])
        tools = tool_names(request)
        if is_extraction(request):
            return Reply(content=extraction_reply(messages))
        if any(
            "[RESULT]" in message_text(m) and "###Response A" in message_text(m) for m in messages
        ):
            return choose_reply(messages)
        if any(
            "[RESULT]" in message_text(m) and "###Response" in message_text(m) for m in messages
        ):
            return grade_reply(messages)
        if messages and messages[-1].get("role") == "tool":
            return self._after_tools(messages, tools)
        return self._answer(messages, tools)

    # -- replies ----------------------------------------------------------------------

    # tool arguments as a model writes them (JSON)
    def _call(self, name: str, args: dict[str, Any], why: str) -> Reply:
        thinking = f"{why} I will call {name} with {json.dumps(args, ensure_ascii=False)}."
        if self.tool_style == "text":
            payload = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
            return Reply(thinking=thinking, content=f"<tool_call>{payload}</tool_call>")
        return Reply(thinking=thinking, tool_calls=[{"name": name, "arguments": args}])

    # chat messages in Ollama's JSON
    def _answer(self, messages: list[dict[str, Any]], tools: list[str]) -> Reply:
        index = last_user_index(messages)
        question = message_text(messages[index]).strip() if index >= 0 else ""
        attached, question = split_documents(question)
        recalled, saved, question = split_memory(question)
        reply = self._from_context(question, attached, recalled, saved)
        if reply is not None:
            return reply
        history = [
            message_text(m)
            for m in messages[: max(index, 0)]
            if m.get("role") in ("user", "assistant")
        ]
        reply = self._by_tool_or_statement(question, history, tools)
        if reply is None:
            reply = self._from_knowledge(question, history)
        if reply is not None:
            return reply
        return Reply(
            thinking="No rule matches this question and no tool seems needed; I echo it back.",
            content=f"{GENERIC_MARKER}. You asked: {question}",
        )

    def _from_context(
        self,
        question: str,
        attached: list[tuple[str, str]],
        recalled: list[tuple[str, str]],
        saved: list[tuple[str, str]],
    ) -> Reply | None:
        """A reply from what came with the question: a saved memory, a document passage,
        or what memory recalled (None: nothing there answers)."""
        if saved:
            return Reply(
                thinking="The user asked me to remember something, and it has been saved.",
                content=f"Noted, I will remember that: {second_person(saved[0][1])}",
            )
        if _REMEMBER_THAT.match(question):
            return Reply(
                thinking="The user tells me something to remember; I acknowledge it.",
                content="Noted, I will remember that.",
            )
        if attached:  # passages of the session's documents: answer from the best one
            heading, text = max(attached, key=lambda p: _overlap(p[1], question))
            if _overlap(text, question):
                where = heading.rsplit(" (score", 1)[0]
                return Reply(
                    thinking="A passage of the documents attached to this conversation answers.",
                    content=f"From {where}: {_best_sentence(text, question)}",
                )
        from_memory = answer_from_memory(question, recalled)
        if from_memory:
            return Reply(
                thinking="What I remember from earlier conversations answers this question.",
                content=from_memory,
            )
        return None

    def _by_tool_or_statement(
        self, question: str, history: list[str], tools: list[str]
    ) -> Reply | None:
        """A tool call the question asks for, or a statement acknowledged (None: neither)."""
        urls = find_urls(question)
        statement = _favourites([question])

        if urls and _FETCH_WORDS.search(question):
            return self._tool_or_say(
                "web_fetch", {"url": urls[0]}, tools, "The question names a URL to read."
            )
        if statement and "?" not in question:
            thing, value = statement[0]
            return Reply(
                thinking="The user is telling me a personal preference; I acknowledge it.",
                content=f"Got it: your favourite {thing} is {value}. I'll remember that.",
            )
        if _OWN_FILES.search(question) and "search_files" in tools:
            return self._call(
                "search_files",
                {"query": question},
                "The user asks about their own notes; I search their files first.",
            )
        if _SEARCH_WORDS.search(question):
            return self._tool_or_say(
                "web_search",
                {"query": question},
                tools,
                "This is time-sensitive or asks for search results, so my knowledge may be stale.",
            )
        if _RECALL_WORDS.search(question):
            if "recall_memory" in tools:
                return self._call(
                    "recall_memory",
                    {"query": question},
                    "The user refers to something said before; I should look in my memory.",
                )
            facts = _favourites(history)
            if facts:
                thing, value = facts[-1]
                return Reply(
                    thinking="The conversation so far holds what the user told me.",
                    content=f"You told me that your favourite {thing} is {value}.",
                )
            return Reply(
                thinking="The user refers to something earlier, but I have no record of it.",
                content="I don't have any record of you telling me about that.",
            )
        return None

    @staticmethod
    def _from_knowledge(question: str, history: list[str]) -> Reply | None:
        """What the brain knows without a tool (None: nothing)."""
        if re.search(r"capital of france", question, re.I):
            return Reply(
                thinking="A geography fact I know: France's capital is Paris. No tool needed.",
                content="The capital of France is Paris.",
            )
        if _WHY_IT.search(question):
            if any(_GIL.search(text) for text in history):
                return Reply(
                    thinking="'It' refers to the GIL we discussed earlier; I explain its origin.",
                    content=(
                        "The GIL was introduced in the early 1990s, when CPython gained threads, "
                        "because CPython's memory management (reference counting) is not "
                        "thread-safe: one Global Interpreter Lock was the simplest way to keep "
                        "the interpreter and C extensions safe and single-threaded code fast."
                    ),
                )
            return Reply(
                thinking="'It' has no referent: nothing earlier in the conversation says what.",
                content="What do you mean by 'it'? Could you tell me what you are asking about?",
            )
        if _GIL.search(question):
            return Reply(
                thinking="The user asks about the Python GIL, which I can explain directly.",
                content=(
                    "The Python GIL (Global Interpreter Lock) is a mutex in CPython that lets "
                    "only one thread execute Python bytecode at a time. It simplifies memory "
                    "management but limits CPU-bound multi-threaded programs."
                ),
            )
        if "?" not in question and _PERSONAL.search(question):
            return Reply(
                thinking="The user tells me something about themselves; I acknowledge it.",
                content="Thanks for telling me.",
            )
        return None

    # tool arguments as a model writes them (JSON)
    def _tool_or_say(self, name: str, args: dict[str, Any], tools: list[str], why: str) -> Reply:
        if name in tools:
            return self._call(name, args, why)
        return Reply(
            thinking=f"{why} But the {name} tool is not available, so I answer without it.",
            content=f"I would need the {name} tool to answer this, and it is not available.",
        )

    # chat messages in Ollama's JSON
    def _after_tools(self, messages: list[dict[str, Any]], tools: list[str]) -> Reply:
        index = last_user_index(messages)
        question = message_text(messages[index]) if index >= 0 else ""
        turn = messages[index + 1 :]
        called = [
            call_parts(c)
            for m in turn
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        batch = _last_batch(turn)

        fetched = any(name == "web_fetch" for name, _ in called)
        if _TOP_RESULT.search(question) and not fetched and "web_fetch" in tools:
            for name, text in batch:
                urls = find_urls(text) if name == "web_search" else []
                if urls:
                    return self._call(
                        "web_fetch",
                        {"url": urls[0]},
                        "The user wants the content of the top result, not just its snippet.",
                    )

        read = any(name == "read_file" for name, _ in called)
        if not read and "read_file" in tools:
            for name, text in batch:
                hit = (
                    _FILE_HIT.search(text.partition("\n[1] ")[2])
                    if name == "search_files"
                    else None
                )
                if hit:
                    args = {"path": hit.group(1).strip()}
                    if hit.group(2):  # a document's page: read that page
                        args["pages"] = hit.group(2)
                    return self._call(
                        "read_file",
                        args,
                        "Search found a matching file; I read it before answering.",
                    )

        parts = [self._summarise(name, text, question) for name, text in batch]
        return Reply(
            thinking=(
                f"I have {len(batch)} tool result(s) ({', '.join(n for n, _ in batch)}); "
                "I answer from them and cite the sources."
            ),
            content="\n\n".join(parts) or "The tools returned nothing I can use.",
        )

    @staticmethod
    def _summarise(name: str, text: str, question: str = "") -> str:
        if _FAILURE.match(text):
            return f"The {name} tool failed ({text.strip()}), so I cannot answer from it."
        facts = _favourites([text]) if name == "recall_memory" else []
        if facts:
            thing, value = facts[0]
            return f"You told me that your favourite {thing} is {value}."
        lines = meaningful_lines(text)
        urls = find_urls(text)[:3]
        pages = _pages(text)
        read = re.search(r"^File: (.+)$", text, re.M)
        if name == "read_file" and read and pages:  # a document's pages: cite file and page
            number, section = _best_page(pages, question)
            said = _best_sentence(section, question)
            return f"From {read.group(1)}, page {number}: {said}"
        if name == "web_fetch" and urls and pages:  # a document: cite the page that answers
            number, section = _best_page(pages, question)
            cited = f"{urls[0].split('#')[0]}#page={number}"
            return (
                f"From page {number} of the document {cited}: {_best_sentence(section, question)}"
            )
        if name == "web_fetch" and urls:
            summary = f"Summary of the page {urls[0]}: " + " ".join(lines)
        else:
            summary = f"According to {name}: " + " ".join(lines)
            if urls:
                summary += "\nSources: " + ", ".join(urls)
        return summary


def _weakness(response: str) -> int:
    """0: a real answer; 1: none, an echo or a question back; 2: "I don't know"."""
    if HEDGE_MARKER in response:
        return 2
    if not response or GENERIC_MARKER in response or "What do you mean" in response:
        return 1
    return 0


def grade_reply(messages: list[dict[str, Any]]) -> Reply:  # chat messages in Ollama's JSON
    """Absolute grading: a weak response (none, an echo, "I don't know") scores low."""
    prompt = "\n".join(message_text(m) for m in messages)
    match = re.search(r"###Response to evaluate:\n(.*?)(?:\n\n###|\Z)", prompt, re.S)
    response = match.group(1).strip() if match else ""
    weak = _weakness(response)
    score = {2: 1, 1: 2}.get(weak, 4)
    feedback = (
        "The response does not answer the instruction."
        if weak
        else "The response answers the instruction clearly and stays with the evidence."
    )
    return Reply(
        thinking=f"I compare the response to the rubric; it deserves {score}.",
        content=f"Feedback: {feedback} [RESULT] {score}",
    )


def choose_reply(messages: list[dict[str, Any]]) -> Reply:  # chat messages in Ollama's JSON
    """Relative grading: the stronger response wins; between equals it picks the first,
    as position-biased judges do (so asking in both orders makes it a tie)."""
    prompt = "\n".join(message_text(m) for m in messages)
    found = {
        label: re.search(rf"###Response {label}:\n(.*?)(?:\n\n###|\Z)", prompt, re.S)
        for label in "AB"
    }
    weak = {label: _weakness(m.group(1).strip() if m else "") for label, m in found.items()}
    choice = "B" if weak["B"] < weak["A"] else "A"
    why = "it answers the question" if weak["A"] != weak["B"] else "they are equally good"
    return Reply(
        thinking=f"I compare both responses to the rubric: {why}.",
        content=f"Feedback: Response {choice} is the better one; {why}. [RESULT] {choice}",
    )


class HedgingBrain:
    """A weaker model than :class:`RuleBrain`: it first says it does not know (graded 1),
    and answers like RuleBrain once shown a reviewer's feedback on that - for the retry."""

    def __init__(self, rules: RuleBrain | None = None) -> None:
        self.rules = rules or RuleBrain()

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply:
        # an Ollama request body, as a client sent it (JSON)
        messages: list[dict[str, Any]] = list(request.get("messages") or [])
        text = "\n".join(message_text(m) for m in messages)
        if "[RESULT]" in text and "###Response" in text:
            return self.rules(request)
        index = last_user_index(messages)
        last = message_text(messages[index]) if index >= 0 else ""
        if "A reviewer graded your answer" in last:
            # Answer the question that was asked before the first attempt.
            asked = last_user_index(messages[:index])
            return self.rules({**request, "messages": messages[: asked + 1]})
        return Reply(
            thinking="I am not confident about this one.",
            content=f"{HEDGE_MARKER}, sorry. You asked: {last.strip()}",
        )


class ModelBrains:
    """A brain per model name: two models that answer differently behind one server."""

    def __init__(self, brains: Mapping[str, Brain], default: Brain | None = None) -> None:
        self.brains = {_base_name(name): brain for name, brain in brains.items()}
        self.default = default

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply | str:
        brain = self.brains.get(_base_name(str(request.get("model") or ""))) or self.default
        if brain is None:
            return Reply(error=f"ModelBrains: no brain for {request.get('model')!r}", status=500)
        return brain(request)


def _base_name(model: str) -> str:
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"
