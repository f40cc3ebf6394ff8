"""Read a judge's grade from the END of its output, or say why there is none.

The original parser searched the whole text and matched the ``[RESULT]`` of the prompt
template quoted back by the judge, scoring everything 5. Here a score counts only when it
ends the output: nothing but whitespace, punctuation, closing brackets or end tokens may
follow it. Anything else is ``None`` with a reason: a missing grade is data, a guessed one
is noise. Only a short window at the end is matched, with possessive quantifiers, so a
hostile or runaway output cannot make parsing slow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_THINK_OPEN = re.compile(r"<(?:think|thinking|\|think\|)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)>|<\|/think\|>", re.IGNORECASE)

# What may follow the score: whitespace, closing punctuation, markdown emphasis, end tokens.
_TAIL_CHARS = " \t\r\n.!,;:)]}*_`\"'»"
_END_TOKEN = re.compile(r"(?:</s>|<\|[a-z_]{1,30}\|>|<\|end[^>]{0,30}>)\Z", re.IGNORECASE)
_WINDOW = 300  # a score marker is short; only the end of the output is searched

_NOT_MORE_DIGITS = r"(?!\d|[.,]\d)"
_OUT_OF_5 = rf"(?:\s*+(?:/|out\s++of)\s*+5{_NOT_MORE_DIGITS})?"
_EMPH = r"[*_\s]*+"


def _num(n: int) -> str:
    return rf"(?P<n{n}>[-+]?\d++(?:[.,]\d++)?)"


_MARKER_AT_END = re.compile(
    "(?:"
    + "|".join(
        (
            # [RESULT] 4, [RESULT]: (4), [RESULT] **4**/5
            rf"\[RESULT\]{_EMPH}:?{_EMPH}\(?{_EMPH}{_num(0)}{_EMPH}\)?{_OUT_OF_5}",
            # Score: 4, Final score is 4, **Score:** 4 out of 5
            rf"\b(?:final\s++|overall\s++)?score{_EMPH}(?:[:=]|is){_EMPH}{_num(1)}{_OUT_OF_5}",
            # 4/5, 4 out of 5
            rf"(?<![\w.,]){_num(2)}\s*+(?:/|out\s++of)\s*+5{_NOT_MORE_DIGITS}",
        )
    )
    + r")\Z",
    re.IGNORECASE,
)
_ANY_MARKER = re.compile(r"\[RESULT\]|\bscore\b|/\s?5\b|\bout of 5\b", re.IGNORECASE)
_FEEDBACK_PREFIX = re.compile(r"^\s*(?:#+\s*)?\**feedback\**\s*:\s*", re.IGNORECASE)


@dataclass
class Grade:
    """A judge's verdict; ``reason`` says why ``score`` is None."""

    score: int | None
    feedback: str
    reason: str | None = None


def strip_thinking(text: str) -> str:
    """Drop reasoning so it is never parsed as a grade.

    Everything up to the last closing tag is thinking (the opening tag may have been in
    the chat template); an opening tag left after that starts thinking that never ended.
    """
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    return text[: opened.start()] if opened else text


def _strip_tail(text: str) -> str:
    """Drop what may follow a score: spaces, closing punctuation, emphasis, end tokens."""
    while True:
        text = text.rstrip(_TAIL_CHARS)
        token = _END_TOKEN.search(text, max(0, len(text) - 40))
        if token is None:
            return text
        text = text[: token.start()]


def _feedback(text: str) -> str:
    return _FEEDBACK_PREFIX.sub("", text).strip(" \t\r\n*_")


def parse_grade(output: str) -> Grade:
    """The score 1-5 at the very end of ``output``; never taken from the middle."""
    output = output or ""
    text = strip_thinking(output)
    body = _strip_tail(text)
    if not body.strip():
        only_thinking = bool(output.strip()) and not text.strip()
        reason = "nothing but thinking in the judge output" if only_thinking else None
        return Grade(None, "", reason or "empty judge output")
    offset = max(0, len(body) - _WINDOW)
    marker = _MARKER_AT_END.search(body, offset)
    if marker is None:
        reason = (
            "the judge output does not end with a score marker"
            if _ANY_MARKER.search(body)
            else "no score found at the end of the judge output"
        )
        return Grade(None, _feedback(body), reason)
    raw = next(g for g in marker.groups() if g is not None)
    feedback = _feedback(body[: marker.start()])
    if not re.fullmatch(r"[-+]?\d+", raw):
        return Grade(None, feedback, f"score {raw!r} is not a whole number 1-5")
    score = int(raw)
    if not 1 <= score <= 5:
        return Grade(None, feedback, f"score {score} is out of the range 1-5")
    return Grade(score, feedback)


_CHOICE_AT_END = re.compile(
    rf"\[RESULT\]{_EMPH}:?{_EMPH}\(?{_EMPH}(?:Response{_EMPH})?(?P<c>[AB]){_EMPH}\)?\Z",
    re.IGNORECASE,
)


@dataclass
class Choice:
    """A judge's relative verdict: which response is better, ``"A"`` or ``"B"``."""

    choice: str | None
    feedback: str
    reason: str | None = None


def parse_choice(output: str) -> Choice:
    """``[RESULT] A`` or ``[RESULT] B`` at the very end of ``output`` (Prometheus' relative
    form); like :func:`parse_grade`, never taken from the middle."""
    output = output or ""
    text = strip_thinking(output)
    body = _strip_tail(text)
    if not body.strip():
        return Choice(None, "", "empty judge output")
    marker = _CHOICE_AT_END.search(body, max(0, len(body) - _WINDOW))
    if marker is None:
        reason = (
            "the judge output does not end with [RESULT] A or B"
            if "[RESULT]" in body.upper()
            else "no choice found at the end of the judge output"
        )
        return Choice(None, _feedback(body), reason)
    return Choice(marker.group("c").upper(), _feedback(body[: marker.start()]))
