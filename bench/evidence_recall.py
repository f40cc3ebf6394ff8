"""Evidence recall of research mode on a multi-hop set (issue 40), through ``local2 eval``.

The set is HotpotQA's JSON (``bench/multihop/multihop.json``, made by
``bench/multihop/make_set.py``), read by ``local2 eval``'s own reader. Its paragraphs are
served as HTML pages behind a SearXNG-protocol search on loopback (``LoopbackWeb``, ranked
here by BM25 over title, counted twice, and text, its top ``--engine-results`` returned,
each with the first ``--snippet-chars`` of the page as its snippet), and its questions are
run by the eval service (``Evals.start``, what ``local2 eval --mode research`` runs) as a
JSON lines set of the same questions and gold sentences without documents, so the run
searches the web it is given (a set with documents is answered by the built-in ``corpus``
provider instead).

The model is the real ``ChatOllama`` against the Ollama-protocol test server, in three modes:

- **scripted**: the planner's plan is "search the question, read the top 2 results,
  compose" (``ResearchBrain``'s default plan); reflect names no gaps (since issue 40 the
  rule then searches the second hop once, ``research.reflect``'s ``rule_hop``).
- **follows**: the scripted planner, whose reflection searches every name (at most three)
  the reflect prompt lists as given by the sources and not by the question, with the
  question's own words, when the prompt lists such names (the prompt of issue 40 does;
  before it, no prompt did, and this mode is the scripted one): an upper bound on a model
  that searches the one name the question turns on;
- **fallback**: every plan and gaps reply fails its schema (not JSON, twice), so the run
  takes the deterministic fallback plan (``research.plan_schema.fallback_plan``) and
  whatever the fallback does after a round.

For each mode it reports:

- **sentences**: the share of gold supporting sentences in the context the model receives
  when it writes the report (the compose request the server got, matched as
  ``local2.evals._evidence`` matches: whole, or cut at a ``…``); beside it the share
  ``local2 eval`` itself reports (every ledger entry's text);
- **questions**: the share of questions with all their gold sentences in that context;
- **time per question** (the run's own; the model answers at once and the web at once,
  unless ``--reply-delay`` and ``--web-delay`` say), searches, pages read and ledger entries
  per question;
- **tokens**: the prompt tokens the model received per question over all its calls (the test
  server counts words), and the characters of sources in the compose request against the
  compose budget (``research.compose_chars``);
- **lost**: each gold sentence that did not reach the compose request, by the best engine rank
  its page had in the run's searches (1-5, 6-10, not in the engine's top 10), and by what the
  run did with its page: read (and cut from the compose request), found and not read (its
  snippet in the ledger), or never found.

``--slice A:B`` runs questions A to B of the set (from 1, both included) over the paragraphs
of those questions only, so ``hotpot_dev_500.json --slice 1:100`` is ``hotpot_dev_100.json``.
The public set's split (bench/README.md, issue 45): 1-100 tuned on by earlier rounds, 101-300
for development, 301-500 held out, run once for the figure reported.

``--against TREE`` runs each mode on this tree and on ``TREE`` (each in its own process, on
this interpreter with that tree's ``src`` and ``testkit/src`` first) and reports both side by
side; given again, on more trees (issue 55: main and the tree before the last round beside a
branch). A mode's questions are run in ``--turns`` turns (4: every 4th question), each tree
in its turn, in an order that turns from turn to turn, so a load that comes and goes falls on
all; the time ratio is given pooled and turn by turn, and a last table puts each tree's
sentences, questions, two-bridge comparisons (2WikiMultiHopQA's ``bridge_comparison``
questions), pages read, ledger entries and median time beside the last tree's.

The 2WikiMultiHopQA set is its dev questions 100-199 in HotpotQA's format
(``bench/public/build.py --twowiki``; questions 0-99 are held out and never read).

Offline; it talks only to 127.0.0.1 and starts and stops its own servers.

    .venv/bin/python bench/evidence_recall.py [--set FILE] [--slice A:B | --limit N]
        [--modes scripted,follows,fallback] [--against TREE [--turns 4]] [--reply-delay S]
        [--web-delay S] [--engine-results 10] [--snippet-chars 160] [--json FILE]
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote

from local2.evals import Question, QuestionSet, Reached, evidence_recall, load_set
from local2_testkit.brains import Reply
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, Page

SET = Path(__file__).resolve().parent / "multihop" / "multihop.json"
HERE = Path(__file__).resolve().parents[1]


def _engine_part(name: str) -> ModuleType:
    """This tree's ``local2/retrieval/_<name>.py``, loaded by path, whichever tree's code is
    first on the path: the search engine is the bench's, the same for every tree it runs."""
    path = HERE / "src" / "local2" / "retrieval" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_evidence_engine_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bm25_scores = _engine_part("_relevance").bm25_scores
terms = _engine_part("_text").terms
MODEL = "qwen3:4b"
UNUSABLE = "I would rather not plan this in JSON."  # fails any schema, and its repair


class FallbackBrain(ResearchBrain):
    """Every structured reply (a plan, gaps) unusable: the run takes its fallbacks."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        fmt = request.get("format")
        if isinstance(fmt, dict) and fmt.get("title") in ("ResearchPlan", "ResearchGaps"):
            self._count("unusable")
            return Reply(content=UNUSABLE)
        return super().__call__(request)


# How issue 40's reflect prompt lists the names (its first wording, then its present one).
NAMES_LINE = re.compile(
    r"^(?:Named in the sources, not in the question|Not read about yet): (.+)$", re.M
)
ASKING = re.compile(r"\b[a-z]{4,}\b")
NOT_ASKED = frozenset(["which", "what", "with", "from", "that", "this", "were", "does"])


class FollowingBrain(ResearchBrain):
    """The scripted planner, whose reflection does what the reflect prompt asks when the
    prompt lists names the sources give and the question does not (issue 40's prompt): it
    searches each of them (at most three, ``research.max_gaps``), with the question's own
    lower-case words; otherwise no gaps. Searching every name listed, it is an upper bound on
    a model that picks the one the question turns on."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        fmt = request.get("format")
        if isinstance(fmt, dict) and fmt.get("title") == "ResearchGaps":
            self._count("gaps")
            prompt = str((request.get("messages") or [{}])[-1].get("content") or "")
            named = NAMES_LINE.search(prompt)
            question = prompt.split("\n", 1)[0].removeprefix("Question: ")
            asked = " ".join(
                dict.fromkeys(w for w in ASKING.findall(question) if w not in NOT_ASKED)
            )
            names = [n.strip() for n in named.group(1).split(";")] if named else []
            gaps = [{"query": f"{name} {asked}"[:80]} for name in names[:3] if name]
            return Reply(content=json.dumps({"gaps": gaps}))
        return super().__call__(request)


class RankedWeb(LoopbackWeb):
    """The loopback search ranked by BM25 over each page's title (twice) and text, as an
    engine would rank it, its snippet the start of the page."""

    def __init__(
        self, pages: list[Page], *, max_results: int, snippet_chars: int, delay_s: float = 0.0
    ) -> None:
        super().__init__(pages, max_results=max_results)
        self.snippet_chars = snippet_chars
        self.search_delay_s = self.web_delay_s = delay_s
        self._names = list(self.pages)
        # Engines weigh a title match more than one in the text: the title counts twice.
        self._terms = [terms(f"{p.title} {p.title} {p.text}") for p in self.pages.values()]

    def rank(self, query: str) -> list[Page]:
        scores = bm25_scores(self._terms, set(terms(query)), k1=1.2, b=0.75)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], self._names[i]))
        return [self.pages[self._names[i]] for i in order if scores[i] > 0]

    def _page(self, name: str) -> tuple[int, bytes, str]:
        if self.web_delay_s:
            time.sleep(self.web_delay_s)
        return super()._page(name)

    def _search(self, query: str) -> tuple[int, bytes, str]:
        if self.search_delay_s:
            time.sleep(self.search_delay_s)
        results = [
            {
                "url": self.page_url(p.name),
                "title": p.title,
                "content": " ".join(p.text.split())[: self.snippet_chars],
                "engine": "loopback",
            }
            for p in self.rank(query)[: self.max_results]
        ]
        body = {"query": query, "number_of_results": len(results), "results": results}
        return 200, json.dumps(body).encode(), "application/json"


def page_name(doc_id: str, n: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", doc_id).strip("-")[:60]
    return f"{n:04d}-{slug}"


def as_pages(qset: QuestionSet) -> list[Page]:
    """Each paragraph of the set as an article page."""
    pages = []
    for n, doc in enumerate(qset.documents):
        title = html.escape(doc.title)
        body = (
            f"<!doctype html><html><head><title>{title}</title></head><body><main><article>"
            f"<h1>{title}</h1><p>{html.escape(doc.text)}</p></article></main></body></html>"
        )
        pages.append(Page(page_name(doc.id, n), doc.title, body, doc.text))
    return pages


def questions_file(
    qset: QuestionSet, folder: Path, limit: int | None = None, part: tuple[int, int] = (0, 1)
) -> Path:
    """The set's questions (its first ``limit``; of those, with ``part`` ``(i, k)``, every
    ``k``-th from the ``i``-th) and gold sentences as JSON lines, without its documents."""
    path = folder / f"{qset.name}.jsonl"
    first, every = part
    with path.open("w", encoding="utf-8") as out:
        for q in qset.questions[:limit][first::every]:
            line = {
                "id": q.id,
                "question": q.question,
                "answers": list(q.answers),
                "evidence": [e for e in q.evidence if e.strip()],  # a real set has empty ones
                "meta": dict(q.meta),
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


@dataclass
class Tally:
    """One mode's figures, question by question."""

    mode: str
    tree: str = "this tree"
    sentences: int = 0
    reached: int = 0  # in the compose request
    in_ledger: int = 0  # what local2 eval reports
    questions: int = 0
    complete: int = 0
    complete_ledger: int = 0
    times: list[float] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    source_chars: list[int] = field(default_factory=list)
    searches: list[int] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    read_s: list[float] = field(default_factory=list)  # read steps' wall seconds
    ledger: list[int] = field(default_factory=list)
    lost: Counter[str] = field(default_factory=Counter)
    where: Counter[str] = field(default_factory=Counter)  # what the run did with a lost page
    by_type: dict[str, list[int]] = field(default_factory=dict)  # sentences, questions
    budget: int = 0  # research.compose_chars
    losses: list[dict[str, Any]] = field(default_factory=list)  # each lost sentence's page


def compose_sources(requests: list[dict[str, Any]]) -> dict[str, str]:
    """Each question's last compose request: the sources part of its prompt (what
    ``research.compose_chars`` bounds)."""
    found: dict[str, str] = {}
    for request in requests:
        if request.get("format"):
            continue
        for message in request.get("messages") or []:
            text = str(message.get("content") or "")
            composing = (
                message.get("role") == "user"
                and text.startswith("Question: ")
                and "\n\nSources:\n\n" in text
                and text.rstrip().endswith("Write the report.")
            )
            if composing:
                question, _, rest = text.partition("\n\nSources:\n\n")
                shown = rest.rstrip().removesuffix("Write the report.").removesuffix("\n\n")
                found[question.removeprefix("Question: ").strip()] = shown
    return found


def run_facts(agent: Any, run_id: str) -> dict[str, Any]:
    """Searches, pages read and ledger entries of one research run, from its checkpoint."""
    values = agent.research.graph.get_state({"configurable": {"thread_id": run_id}}).values
    steps = (values or {}).get("steps") or {}
    queries, reads, read_s = [], 0, 0.0
    for step in steps.values():
        if step.get("tool") == "web_fetch":
            read_s += float(step.get("duration_s") or 0.0)
        for call in step.get("calls") or []:
            if call.get("tool") == "web_search":
                queries.append(str(call.get("args", {}).get("query", "")))
            elif call.get("tool") == "web_fetch" and not call.get("error"):
                reads += 1
    entries = (values or {}).get("ledger") or []
    kinds = {unquote(str(s["url"]).rsplit("/pages/", 1)[-1]): s["kind"] for s in entries}
    return {
        "queries": queries,
        "reads": reads,
        "read_s": read_s,
        "ledger": len(entries),
        "kinds": kinds,
    }


def best_rank(web: RankedWeb, queries: list[str], page: str, depth: int) -> int | None:
    ranks = []
    for query in queries:
        ranked = [p.name for p in web.rank(query)[:depth]]
        if page in ranked:
            ranks.append(ranked.index(page) + 1)
    return min(ranks) if ranks else None


def library_off() -> dict[str, dict[str, str]]:
    """Settings that keep no read in the library: the bench times research, not the library
    (bench/library.py does), and loads no embedder. A tree from before the library (issue
    46) has no such setting, and keeps nothing anyway."""
    from local2.config._schema import Settings

    return {"library": {"keep": "off"}} if "library" in Settings.model_fields else {}


def run_mode(mode: str, qset: QuestionSet, args: argparse.Namespace) -> Tally:
    from langchain_ollama import ChatOllama

    from local2.config import load_settings
    from local2.service import Agent, Evals
    from local2_testkit.ollama_server import FakeOllama
    from local2_testkit.research_web import research_overrides

    brains = {"scripted": ResearchBrain, "follows": FollowingBrain, "fallback": FallbackBrain}
    brain = brains[mode]()
    pages = as_pages(qset)
    page_of = {doc.id: page.name for doc, page in zip(qset.documents, pages, strict=True)}
    doc_of_sentence = {}
    for doc in qset.documents:
        for q in qset.questions:
            for sentence in q.evidence:
                if sentence in doc.text:
                    doc_of_sentence[(q.id, sentence)] = doc.id
    by_question = {q.question: q for q in qset.questions}
    tally = Tally(mode)
    with (
        FakeOllama(brain, delay_s=args.reply_delay) as fake,
        RankedWeb(
            pages,
            max_results=args.engine_results,
            snippet_chars=args.snippet_chars,
            delay_s=args.web_delay,
        ) as web,
        tempfile.TemporaryDirectory() as home,
    ):
        overrides = research_overrides(web, Path(home) / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides.update(library_off())
        settings = load_settings(overrides=overrides)
        budget = settings.research.compose_chars
        model = ChatOllama(model=MODEL, base_url=fake.url)
        agent = Agent(settings, chat_model=model, backend="ollama", memory=None, critic=None)
        evals = Evals(settings, agent.access, base=agent, chat_model=model, backend="ollama")
        first, _, every = (args.part or "0/1").partition("/")
        qfile = questions_file(qset, Path(home), args.limit, (int(first), int(every)))
        results: list[dict[str, Any]] = []
        done = 0
        for kind, data in evals.start(str(qfile), mode="research", grader="match", any_path=True):
            if kind == "question":
                results.append(dict(data))
                done += 1
                if done % 10 == 0:
                    print(f"  {mode}: {done} questions", file=sys.stderr)
        composed = compose_sources(fake.chat_requests)
        for result in results:
            question: Question = by_question[result["question"]]
            if result.get("error"):
                print(f"  {question.id} failed: {result['error']}", file=sys.stderr)
            shown = composed.get(question.question, "")
            gold = [e for e in question.evidence if e.strip()]
            report = evidence_recall(gold, [Reached("compose", shown)])
            facts = run_facts(agent, str(result["session_id"]))
            tally.sentences += report["total"]
            tally.reached += report["found"]
            tally.questions += 1
            tally.complete += report["found"] == report["total"]
            ledger = result.get("evidence") or {"found": 0, "total": report["total"]}
            tally.in_ledger += ledger["found"]
            tally.complete_ledger += ledger["found"] == ledger["total"]
            kind_of = question.meta.get("type", "?")
            per = tally.by_type.setdefault(kind_of, [0, 0, 0, 0])
            per[0] += report["found"]
            per[1] += report["total"]
            per[2] += report["found"] == report["total"]
            per[3] += 1
            tally.times.append(float(result["time_s"]))
            tally.prompt_tokens.append(int((result.get("tokens") or {}).get("prompt") or 0))
            tally.source_chars.append(len(shown))
            tally.searches.append(len(facts["queries"]))
            tally.reads.append(facts["reads"])
            tally.read_s.append(facts["read_s"])
            tally.ledger.append(facts["ledger"])
            for item in report["items"]:
                if item["reached"]:
                    continue
                doc = doc_of_sentence.get((question.id, item["text"]))
                rank = (
                    best_rank(web, facts["queries"], page_of[doc], 10) if doc is not None else None
                )
                bucket = (
                    "not in the engine's top 10"
                    if rank is None
                    else ("engine rank 1-5" if rank <= 5 else "engine rank 6-10")
                )
                tally.lost[f"{kind_of}: {bucket}"] += 1
                kind = facts["kinds"].get(page_of[doc]) if doc is not None else None
                state = (
                    "read, cut"
                    if kind == "page"
                    else ("not found" if rank is None else "found, not read")
                )
                tally.where[f"{state} ({bucket})"] += 1
                tally.losses.append(
                    {
                        "id": question.id,
                        "type": kind_of,
                        "page": page_of.get(doc, "") if doc is not None else "",
                        "state": state,
                        "rank": rank,
                        "queries": facts["queries"],
                    }
                )
        agent.close()
    tally.budget = budget
    return tally


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f} %" if b else "n/a"


def sliced(path: Path, span: str | None, folder: Path) -> Path:
    """The set at ``path``, or its questions ``A:B`` (from 1, both included) with their own
    paragraphs only, written to ``folder``."""
    if not span:
        return path
    first, _, last = span.partition(":")
    a, b = int(first), int(last)
    records = json.loads(path.read_text(encoding="utf-8"))
    if not 1 <= a <= b <= len(records):
        raise SystemExit(f"--slice {span}: the set has questions 1 to {len(records)}")
    out = folder / f"{path.stem}_{a}-{b}.json"
    out.write_text(json.dumps(records[a - 1 : b], ensure_ascii=False), encoding="utf-8")
    return out


def run_tree(tree: Path, mode: str, part: str, args: argparse.Namespace) -> Tally:
    """One mode on ``tree`` (its questions' ``part``, ``I/K``), in a process of its own with
    that tree's code first."""
    paths = os.pathsep.join(str(tree / p) for p in ("src", "testkit/src"))
    env = {**os.environ, "PYTHONPATH": paths}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "tally.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--modes", mode]
        command += ["--set", str(args.set), "--json", str(out), "--part", part]
        command += ["--engine-results", str(args.engine_results)]
        command += ["--snippet-chars", str(args.snippet_chars)]
        command += ["--reply-delay", str(args.reply_delay), "--web-delay", str(args.web_delay)]
        command += [f"--slice={args.slice}"] if args.slice else []
        command += ["--limit", str(args.limit)] if args.limit else []
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
        data = json.loads(out.read_text(encoding="utf-8"))[0]
    data["lost"], data["where"] = Counter(data["lost"]), Counter(data["where"])
    return Tally(**{**data, "tree": str(tree)})


def merged(parts: list[Tally]) -> Tally:
    """One tally of a mode's turns: counts added, per-question figures put together."""
    whole = Tally(parts[0].mode, parts[0].tree, budget=parts[0].budget)
    for t in parts:
        for name, value in vars(t).items():
            mine = getattr(whole, name)
            if isinstance(value, int | list | Counter) and name != "budget":
                setattr(whole, name, mine + value)
            elif name == "by_type":
                for kind, row in value.items():
                    old = mine.setdefault(kind, [0, 0, 0, 0])
                    mine[kind] = [a + b for a, b in zip(old, row, strict=True)]
    return whole


def both_trees(args: argparse.Namespace) -> tuple[list[Tally], dict[str, list[float]]]:
    """Each mode on this tree and on every ``--against`` tree, its questions in ``--turns``
    turns (every K-th question), each tree a process a turn, in an order that turns from
    turn to turn (A B C, B C A, ...; with two trees A B, B A), so a load that comes and goes
    falls on all; and each turn's ratio of median times (this tree / the first ``--against``
    tree)."""
    trees = [HERE, *args.against]
    tallies: list[Tally] = []
    ratios: dict[str, list[float]] = {}
    for n, mode in enumerate(m for m in args.modes.split(",") if m):
        turns: dict[Path, list[Tally]] = {tree: [] for tree in trees}
        for turn in range(args.turns):
            shift = (n + turn) % len(trees)
            for tree in trees[shift:] + trees[:shift]:
                turns[tree].append(run_tree(tree, mode, f"{turn}/{args.turns}", args))
            mine, other = (statistics.median(turns[t][-1].times) for t in trees[:2])
            ratios.setdefault(mode, []).append(mine / other)
        ours = merged(turns[HERE])
        ours.tree = f"this tree ({HERE.name})"
        tallies += [ours, *(merged(turns[t]) for t in trees[1:])]
    return tallies, ratios


def two_bridge(t: Tally) -> str:
    """The two-bridge comparisons (2WikiMultiHopQA's ``bridge_comparison``) complete."""
    row = t.by_type.get("bridge_comparison")
    return f"{pct(row[2], row[3])} ({row[2]}/{row[3]})" if row else "n/a"


def summary(tallies: list[Tally], set_name: str) -> None:
    """One row per mode and tree: what issue 55 compares, time against the last tree."""
    print(
        "\n| set | mode | tree | sentences reaching the model | questions complete | "
        "two-bridge comparisons complete | pages read / ledger entries | "
        "s per question, median | time / the last tree's |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for t in tallies:
        last = [u for u in tallies if u.mode == t.mode][-1]
        ratio = statistics.median(t.times) / statistics.median(last.times)
        print(
            f"| {set_name} | {t.mode} | {t.tree} | {pct(t.reached, t.sentences)} "
            f"({t.reached}/{t.sentences}) | {pct(t.complete, t.questions)} "
            f"({t.complete}/{t.questions}) | {two_bridge(t)} | "
            f"{statistics.fmean(t.reads):.1f} / {statistics.fmean(t.ledger):.1f} | "
            f"{statistics.median(t.times):.2f} | {ratio:.2f}x |"
        )


def row_of(t: Tally) -> str:
    return (
        f"| {t.mode} | {t.tree} | {pct(t.reached, t.sentences)} ({t.reached}/{t.sentences}) | "
        f"{pct(t.complete, t.questions)} ({t.complete}/{t.questions}) | "
        f"{pct(t.in_ledger, t.sentences)} / {pct(t.complete_ledger, t.questions)} | "
        f"{statistics.median(t.times):.2f} / {statistics.fmean(t.times):.2f}; "
        f"{statistics.fmean(t.read_s):.2f} | "
        f"{statistics.fmean(t.searches):.1f} / {statistics.fmean(t.reads):.1f} / "
        f"{statistics.fmean(t.ledger):.1f} | {statistics.fmean(t.prompt_tokens):.0f} | "
        f"{statistics.fmean(t.source_chars):.0f} / {max(t.source_chars)}; {t.budget} |"
    )


def report(
    tallies: list[Tally], ratios: dict[str, list[float]], args: argparse.Namespace, wall: float
) -> None:
    n = tallies[0].questions if tallies else 0
    which = f" (questions {args.slice})" if args.slice else ""
    print(
        f"\n{n} questions of {args.set.name}{which}, search engine top {args.engine_results} "
        f"on loopback (snippets of {args.snippet_chars} chars), model replies after "
        f"{args.reply_delay:g} s, searches and pages after {args.web_delay:g} s; "
        f"{wall:.0f} s in all\n"
    )
    print(
        "| mode | tree | sentences reach the model | questions with all evidence | "
        "(local2 eval, ledger: sentences / questions) | s per question (median / mean; "
        "reading) | "
        "searches / pages read / ledger entries per question | prompt tokens per question "
        "(mean) | compose sources, chars (mean / max; budget) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for t in tallies:
        print(row_of(t))
    for t in tallies:
        types = ", ".join(
            f"{k}: {pct(v[0], v[1])} of sentences, {pct(v[2], v[3])} of questions"
            for k, v in sorted(t.by_type.items())
        )
        lost = ", ".join(f"{k} {v}" for k, v in sorted(t.lost.items()))
        where = ", ".join(f"{k} {v}" for k, v in sorted(t.where.items()))
        print(f"\n{t.mode}, {t.tree}: {types}. Lost sentences: {lost or 'none'}; {where}.")
    for mode, paired in ratios.items():
        ours, before = [t for t in tallies if t.mode == mode][:2]
        ratio = statistics.median(ours.times) / statistics.median(before.times)
        tokens = statistics.fmean(ours.prompt_tokens) / statistics.fmean(before.prompt_tokens)
        print(
            f"\n{mode}: this tree / {before.tree}: time per question (median) {ratio:.2f}x; "
            f"turn by turn {statistics.median(paired):.2f}x (from {min(paired):.2f} to "
            f"{max(paired):.2f}, {len(paired)} turns); prompt tokens {tokens:.2f}x"
        )
    summary(tallies, f"{args.set.name}{which}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--limit", type=int, default=None, help="the first N questions")
    parser.add_argument("--set", type=Path, default=SET, help="a HotpotQA JSON set")
    parser.add_argument("--slice", help="questions A:B of the set (from 1, both included)")
    parser.add_argument("--modes", default="scripted,follows,fallback")
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        help="a tree to run beside this one (again for more: the last is the time baseline)",
    )
    parser.add_argument("--turns", type=int, default=4, help="--against: turns of each mode")
    parser.add_argument("--part", help=argparse.SUPPRESS)  # I/K: a turn's questions
    parser.add_argument("--engine-results", type=int, default=10)
    parser.add_argument("--snippet-chars", type=int, default=160)
    parser.add_argument("--reply-delay", type=float, default=0.0, help="s per model reply")
    parser.add_argument("--web-delay", type=float, default=0.0, help="s per search and page")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    began = time.perf_counter()
    ratios: dict[str, list[float]] = {}
    if args.against is not None:
        tallies, ratios = both_trees(args)
    else:
        with tempfile.TemporaryDirectory() as folder:
            qset = load_set(sliced(args.set, args.slice, Path(folder)))
            tallies = [run_mode(mode, qset, args) for mode in args.modes.split(",") if mode]
    report(tallies, ratios, args, time.perf_counter() - began)
    if args.json:
        data = [{k: v for k, v in vars(t).items()} for t in tallies]
        args.json.write_text(json.dumps(data, indent=1, default=dict), encoding="utf-8")


if __name__ == "__main__":
    main()
