"""The multi-hop set of issue 40 (``bench/multihop``) and the machinery of
``bench/evidence_recall.py``: the set is what its generator makes, ``local2 eval``'s HotpotQA
reader reads it whole, every supporting sentence is in the corpus, and a bridge question's
second page is one its own search does not find."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from local2.evals import load_set
from local2.evals._evidence import Reached, evidence_recall
from local2.research._prompts import compose_messages

BENCH = Path(__file__).resolve().parents[2] / "bench"
SET = BENCH / "multihop" / "multihop.json"
GENERIC = {"In", "Which", "What", "The", "River", "University"}


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def make_set() -> ModuleType:
    return _module(BENCH / "multihop" / "make_set.py")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _module(BENCH / "evidence_recall.py")


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return json.loads(SET.read_text(encoding="utf-8"))


def test_the_committed_set_is_what_the_generator_makes(make_set, records):
    assert make_set.build(make_set.SEED) == records
    assert make_set.build(make_set.SEED + 1) != records  # the seed matters


def test_the_eval_reader_reads_every_question_and_paragraph(records):
    qset = load_set(SET)
    assert qset.format == "hotpotqa" and qset.notes == ()
    assert len(qset.questions) == 100 and len(qset.documents) == 1000
    kinds = [q.meta["type"] for q in qset.questions]
    assert kinds.count("bridge") == 60 and kinds.count("comparison") == 40
    texts = {d.id: d.text for d in qset.documents}
    for record, question in zip(records, qset.questions, strict=True):
        assert len(record["context"]) == 10
        assert len(question.evidence) == 2
        for (title, _), sentence in zip(record["supporting_facts"], question.evidence, strict=True):
            assert sentence in texts[title]  # the gold sentence is in its corpus paragraph
            first = texts[title].split(". ")[0]
            assert sentence not in first  # never the start a search snippet shows


def test_a_bridge_questions_second_page_shares_none_of_its_names(records, bench, make_set):
    qset = load_set(SET)
    web = bench.RankedWeb(bench.as_pages(qset), max_results=10, snippet_chars=160)
    names = {d.id: p.name for d, p in zip(qset.documents, web.pages.values(), strict=True)}
    bridges = [r for r in records if r["type"] == "bridge"]
    assert len(bridges) == 60
    for record in bridges:
        context = {title: "".join(sentences) for title, sentences in record["context"]}
        first, second = (title for title, _ in record["supporting_facts"])
        distinctive = set(re.findall(r"\b[A-Z][a-z]+\b", record["question"])) - GENERIC
        distinctive -= set(make_set.FIRST)  # a first name is shared by many people
        words = set(re.findall(r"\w+", context[second]))
        assert not distinctive & words, (record["_id"], distinctive & words)
        assert second in context[first]  # the first page names the second
        top = [p.name for p in web.rank(record["question"])[:10]]
        assert names[first] in top  # its own search finds the first page
        assert names[second] not in top  # and never the second


def test_compose_sources_reads_the_report_request_as_research_writes_it(bench):
    sources = [
        {
            "n": 1,
            "title": "The Velvet Letter",
            "text": "It was directed by Ines Morhasker.",
            "kind": "page",
        },
        {"n": 2, "title": "Felix Kelsorby", "text": "She was born in Oskpelmere.", "kind": "page"},
    ]
    messages = compose_messages("Where was she born?", sources, 1500, 12000)  # type: ignore[arg-type]
    request = {
        "messages": [
            {"role": m.type.replace("human", "user"), "content": m.content} for m in messages
        ]
    }
    shown = bench.compose_sources([request, {"format": {"title": "ResearchPlan"}, "messages": []}])
    assert list(shown) == ["Where was she born?"]
    report = evidence_recall(
        ["She was born in Oskpelmere.", "He was born in Gardellbury."],
        [Reached("compose", shown["Where was she born?"])],
    )
    assert [i["reached"] for i in report["items"]] == [True, False]


def test_the_fallback_brain_fails_plans_and_gaps_but_writes_the_report(bench):
    brain = bench.FallbackBrain()
    for title in ("ResearchPlan", "ResearchGaps"):
        reply = brain({"format": {"title": title}, "messages": [{"role": "user", "content": "Q"}]})
        with pytest.raises(json.JSONDecodeError):
            json.loads(reply.content)
    report = brain(
        {"messages": [{"role": "user", "content": "Question: Q\n\nSources:\n\n[1] T\nIt is."}]}
    )
    assert "[1]" in report.content


def test_the_questions_file_is_the_same_set_without_its_documents(bench, tmp_path):
    qset = load_set(SET)
    derived = load_set(bench.questions_file(qset, tmp_path))
    assert derived.documents == ()  # the run searches the loopback web, not a corpus
    assert [(q.id, q.question, q.answers, q.evidence) for q in derived.questions] == [
        (q.id, q.question, q.answers, q.evidence) for q in qset.questions
    ]


def test_a_slice_is_its_questions_over_their_own_paragraphs(bench, records, tmp_path):
    """``--slice 3:4``: questions 3 and 4 (from 1, both included) and only their pages, so a
    slice of the 500-question public set from 1 to 100 is its 100-question set."""
    qset = load_set(bench.sliced(SET, "3:4", tmp_path))
    assert [q.id for q in qset.questions] == [r["_id"] for r in records[2:4]]
    assert {d.title for d in qset.documents} == {t for r in records[2:4] for t, _ in r["context"]}
    assert bench.sliced(SET, None, tmp_path) == SET
    with pytest.raises(SystemExit, match="1 to 100"):
        bench.sliced(SET, "90:101", tmp_path)
