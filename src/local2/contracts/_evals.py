"""What an eval run records and reports: one line per question, the run's manifest, its
summary and a comparison of two runs (``local2 eval``, ``GET /eval``, the Evaluate tab).

TypedDicts, like the turn payload: the run folder holds them as JSON, and the HTTP API names
them as response models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict

GradeName = Literal["correct", "incorrect", "not_attempted"]
Diagnosis = Literal["never_found", "partly_found", "found_misread"]
EvalMode = Literal["ask", "research"]
# interrupted: the manifest says running, but no process holds the run (killed): resume it.
RunState = Literal["running", "done", "stopped", "failed", "interrupted"]
SetFormat = Literal["simpleqa", "jsonl", "hotpotqa", "folder"]


class EvidenceItem(TypedDict):
    """One gold evidence sentence, and whether (and where) it reached the model."""

    text: str
    reached: bool
    how: Literal["whole", "cut"] | None  # cut: part of it, up to where the text was cut
    source: str | None  # e.g. "tool:web_search", "memory", "document"


class EvidenceReport(TypedDict):
    """A question's evidence recall: ``found`` of ``total`` gold items reached the model."""

    found: int
    total: int
    recall: float
    items: list[EvidenceItem]


class TokenCounts(TypedDict):
    prompt: int
    completion: int


class QuestionResult(TypedDict):
    """One question of a run: what was asked, what came back, and how it was graded."""

    id: str
    question: str
    gold: list[str]
    answer: str
    grade: GradeName | None  # None: not graded (the answer failed, or no parseable grade)
    grader_reasoning: str
    grader_problem: str | None  # why there is no grade
    exact_match: bool
    f1: float
    contains_gold: bool  # a gold answer appears in the answer, both normalised
    evidence: EvidenceReport | None  # None: the set names no gold evidence for it
    diagnosis: Diagnosis | None  # for answers not graded correct, when evidence is known
    tools: list[str]  # the tools called, in order
    time_s: float
    tokens: TokenCounts | None
    session_id: str | None  # the turn's session (or research run): opens in time travel
    error: str | None  # the question could not be answered; it is asked again on resume
    recorded_at: float


class SetInfo(TypedDict):
    name: str
    path: str
    format: SetFormat
    fingerprint: str  # sha256 of the set's files: a resumed run refuses a changed set
    questions: int  # in the whole set
    documents: int  # its corpus (0: none, the run searches the web)


class GraderInfo(TypedDict):
    model: str | None
    backend: str | None
    is_answerer: bool  # the model grading is the one that answered
    prompt_version: str
    prompt: str


class Selection(TypedDict):
    limit: int | None
    sample: int | None
    seed: int | None
    ids: list[str]  # the questions of this run, in the order they are asked


class RunSettings(TypedDict):
    """What else was in force for a run, as its manifest keeps it (``settings``), from
    :func:`local2.service.evals._setup.settings_record`."""

    search_provider: str
    corpus: str | None
    offline: bool
    tools: list[str]
    memory: str
    critic_in_turn: str
    approvals: str
    research_max_rounds: int
    concurrency: int


if TYPE_CHECKING:
    ManifestSettings: TypeAlias = RunSettings
else:
    # /openapi.json names it an object, as before: a run folder keeps it as written (JSON)
    ManifestSettings = dict[str, Any]


class RunManifest(TypedDict):
    """Everything that decides a run's results, written when it starts."""

    run_id: str
    created_at: float
    updated_at: float
    owner: str
    status: RunState
    set: SetInfo
    mode: EvalMode
    model: str | None
    backend: str | None
    grader: GraderInfo
    selection: Selection
    settings: ManifestSettings  # what else was in force: search provider, corpus, tools, limits
    version: str  # LoCAL2's
    note: NotRequired[str]


class Rate(TypedDict):
    """A proportion with its 95 % Wilson interval."""

    k: int
    n: int
    value: float
    low: float
    high: float


class RunSummary(TypedDict):
    """A run's results added up (over the last record of each question)."""

    questions: int  # selected for the run
    recorded: int
    errors: int
    graded: int
    correct: int
    incorrect: int
    not_attempted: int
    ungraded: int
    accuracy: Rate  # correct of graded
    attempted_accuracy: Rate  # correct of correct + incorrect
    exact_match: Rate  # of answered
    contains_gold: Rate  # of answered
    f1: float  # mean over answered
    evidence_recall: Rate | None  # gold items reached, of all gold items (None: no evidence)
    diagnosis: dict[str, int]  # never_found / partly_found / found_misread
    disagreements: list[str]  # ids where the grader and the string match disagree
    mean_time_s: float


class Comparison(TypedDict):
    """Two runs on the questions both graded: the paired table and exact McNemar."""

    paired: int
    both_correct: int
    only_a: int
    only_b: int
    neither: int
    accuracy_a: Rate
    accuracy_b: Rate
    p_value: float
    verdict: Literal["a", "b", "no_difference"]
    wording: str


class EvalProgress(TypedDict):
    """Where a run is: questions recorded of the run's total, the grades so far (the last
    record of each question), what is being answered, and the time left at this pace."""

    run_id: str
    total: int
    recorded: int  # questions with a record (a failed one too; it is asked again on resume)
    answered_now: int  # recorded since this start or resume
    correct: int
    incorrect: int
    not_attempted: int
    ungraded: int
    errors: int
    running: list[str]  # the ids being answered now
    elapsed_s: float  # since this start or resume
    eta_s: float | None  # None until a question has been answered at this pace


class EvalRunStart(TypedDict):
    """An eval stream's first item (``run``): the run being answered, and by whom."""

    run_id: str
    set: str
    mode: EvalMode
    model: str | None
    backend: str | None
    grader: str | None  # the grader's model ("match": no model)
    grader_is_answerer: bool
    total: int  # questions of the run
    recorded: int  # recorded already (a resumed run)
    concurrency: int
    resumed: bool


class EvalRunRow(TypedDict):
    """One run in a list of runs (``local2 eval list``, ``GET /eval``, the Evaluate tab)."""

    run_id: str
    owner: str
    status: RunState
    created_at: float
    updated_at: float
    set: str
    mode: EvalMode
    model: str | None
    backend: str | None
    provider: str  # the search provider the run answered with ("corpus" for an offline set)
    grader: str | None
    grader_is_answerer: bool
    questions: int
    recorded: int
    accuracy: Rate


class EvalReport(TypedDict):
    """A run's outcome: what decided it, where it stands and its totals (an eval stream's
    ``final`` item)."""

    manifest: RunManifest
    status: RunState
    summary: RunSummary


class EvalDetail(EvalReport):
    """One run whole (``local2 eval show``, ``GET /eval/{id}``): its report and every
    question's last record."""

    results: list[QuestionResult]
