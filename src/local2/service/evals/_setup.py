"""What an eval run answers with: its set, its settings, its grader.

- **The set.** The CLI reads a set from any path the person gives. The app and the HTTP API,
  which may serve several people, read only ``demo`` or a set placed in
  ``<data dir>/eval-sets/`` by name: no request can make the server read another file.
- **The settings.** A run answers with the person's model and settings, but with memory
  off (no recall, no facts kept: a question's answer never depends on the questions before
  it, on their order or on who asked what earlier, and the run leaves nothing in the
  person's memory), without the critic inside the turn (the grader grades; the critic would
  only add a judge call after each answer) and with the web tools only (no files, no MCP).
  A set that carries documents is answered offline: web search is BM25 over the set's
  corpus, written once per version of the set as
  ``<data dir>/eval-corpora/<fingerprint>/<set name>.jsonl`` (the corpus is named by that
  file: ``corpus://<set name>/<document id>``), and every web URL is refused.
- **The grader.** ``--grader`` names a model on the answering model's kind of server, or
  ``match`` (no model: the gold answer's words in the answer, :data:`MATCH_RULE`); by
  default it is the critic's judge (``critic.model``), else the answering model itself,
  which the run then reports. The embedded demo model cannot grade (it says "correct" to
  nearly anything), so, as the critic is off for it, its runs are graded by ``match``
  unless ``critic.grade_embedded``; then its reply is held by a grammar to
  ``{"grade": ...}`` alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from local2.config import Settings, deep_merge
from local2.contracts import RunSettings
from local2.critic import Critic
from local2.errors import EvalFileError, InvalidInput
from local2.evals import (
    DEMO,
    DEMO_PATH,
    MATCH,
    MATCH_RULE,
    MATCH_VERSION,
    PROMPT,
    PROMPT_VERSION,
    Asker,
    GraderVerdict,
    Question,
    QuestionSet,
    grade_answer,
    match_grade,
    set_path,
)
from local2.graph import Services
from local2.tools import CorpusSettings, write_documents

SETS_FOLDER = "eval-sets"  # under the data directory: the sets the app and the API may run
RUNS_FOLDER = "evals"  # under the data directory: one folder per run
CORPORA_FOLDER = "eval-corpora"  # under the data directory: sets' corpora, by fingerprint
_NOT_NAME = re.compile(r"[^a-z0-9]+")
GRADE_SCHEMA: dict[str, Any] = {  # a JSON schema document, for the grader's reply
    "title": "grade",
    "type": "object",
    "properties": {
        "grade": {"type": "string", "enum": ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]},
    },
    "required": ["grade"],
    "additionalProperties": False,
}
GRADE_MAX_TOKENS = 24  # the grade alone: its reasons would be a tiny model's noise


def sets_folder(settings: Settings) -> Path:
    return settings.data_dir / SETS_FOLDER


def set_names(settings: Settings) -> list[str]:
    """The sets the app and the API may run: ``demo`` and what ``eval-sets/`` holds."""
    folder = sets_folder(settings)
    if not folder.is_dir():
        return [DEMO]
    return [DEMO, *sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))]


def find_set(settings: Settings, name: str, *, any_path: bool) -> Path:
    """Where the set ``name`` is: any path (the CLI's person), or for the app and the API
    only ``demo`` or a name in ``<data dir>/eval-sets/``."""
    name = (name or "").strip()
    if not name:
        raise InvalidInput("Name a question set: demo, or a file or folder of questions.")
    if name == DEMO:
        return DEMO_PATH
    if any_path:
        return set_path(name)
    folder = sets_folder(settings)
    if "/" in name or "\\" in name or name.startswith(".") or name == "~":
        raise InvalidInput(
            f"Set {name!r}: name a set, not a path.",
            fix=f"put the set's file or folder in {folder} and give its name, or use demo",
        )
    path = folder / name
    if not path.exists():
        raise EvalFileError(
            f"No set named {name!r} in {folder}.",
            fix="put the set's file or folder there, or use one of: "
            + ", ".join(set_names(settings)),
        )
    return path


def corpus_file(settings: Settings, qset: QuestionSet) -> Path:
    """The set's corpus as a file, written once for each version of the set (its runs share
    it, and the index built over it)."""
    name = _NOT_NAME.sub("-", qset.name.lower()).strip("-") or "set"
    path = settings.data_dir / CORPORA_FOLDER / qset.fingerprint[:16] / f"{name}.jsonl"
    if not path.exists():
        write_documents(qset.documents, path)
    return path


def run_settings(settings: Settings, qset: QuestionSet) -> Settings:
    """The person's settings as a run answers with them (see the module's docstring)."""
    # settings as YAML would give them, merged over the person's before they are checked
    overrides: dict[str, Any] = {"files": {"roots": []}, "mcp": {"servers": []}}
    if qset.documents:
        corpus = corpus_file(settings, qset)
        overrides["web"] = {
            "search": {"provider": "corpus", "corpus_path": str(corpus)},
            "offline": True,
        }
    return Settings.model_validate(deep_merge(settings.model_dump(), overrides))


def settings_record(settings: Settings, services: Services, concurrency: int) -> RunSettings:
    """What else was in force, for the manifest (and the chart's provider)."""
    search = settings.web.search
    return {
        "search_provider": search.provider,
        "corpus": str(search.of(CorpusSettings).corpus_path)
        if search.provider == "corpus"
        else None,
        "offline": settings.web.offline,
        "tools": sorted(services.tools),
        "memory": "off",
        "critic_in_turn": "off",
        "approvals": "denied: nobody answers during a run",
        "research_max_rounds": settings.research.max_rounds,
        "concurrency": concurrency,
    }


@dataclass(frozen=True)
class Grader:
    """How answers are graded, and by what: a model (its name and backend) or ``match``."""

    grade: Callable[[Question, str], GraderVerdict]
    model: str | None
    backend: str | None
    prompt: tuple[str, str] = (PROMPT_VERSION, PROMPT)  # (version, text), for the manifest


def by_match() -> Grader:
    return Grader(
        lambda q, answer: match_grade(q.answers, answer), MATCH, None, (MATCH_VERSION, MATCH_RULE)
    )


def by_model(judge: Asker, model: str | None, backend: str | None) -> Grader:
    def grade(question: Question, answer: str) -> GraderVerdict:
        return grade_answer(judge, question.question, question.answers, answer)

    return Grader(grade, model, backend)


def _judge(chat_model: BaseChatModel, backend: str | None) -> Any:
    """The judge model as it grades (a Runnable invoked like the model): the embedded model
    held to a JSON grade."""
    if backend != "embedded":
        return chat_model
    envelope = {
        "type": "json_schema",
        "json_schema": {"name": "grade", "schema": GRADE_SCHEMA, "strict": True},
    }
    return chat_model.bind(response_format=envelope, max_tokens=GRADE_MAX_TOKENS)


def make_grader(
    settings: Settings,
    services: Services,
    name: str | None = None,
    backend: str | None = None,
) -> Grader:
    """The grader ``name`` (``match``, or a model on ``backend``, default the answering
    model's kind of server), else the critic's judge model, else the answering model (the
    embedded one: ``match``, see the module's docstring)."""
    from local2.models import make_chat_model  # lazy: local2.models: ~3 ms, 2 modules at import

    name = name or settings.critic.model
    embedded = services.backend == "embedded" and not settings.critic.grade_embedded
    if name == MATCH or (not name and embedded):
        return by_match()
    judge_settings = settings.critic.model_copy(update={"enabled": True})
    if name and (name, backend or services.backend) != (services.model_name, services.backend):
        kind = backend or ("openai" if services.backend == "openai" else "ollama")
        chosen = make_chat_model(settings, kind, name)
        model, model_name, model_backend = chosen.model, chosen.name, chosen.backend
    else:
        model, model_name, model_backend = (
            services.chat_model,
            services.model_name,
            services.backend,
        )
    if model_backend == "embedded":
        judge_settings = judge_settings.model_copy(update={"retries": 0})
    return by_model(Critic(_judge(model, model_backend), judge_settings), model_name, model_backend)
