"""Research finds its evidence (issue 40): a wider net, reranked and de-duplicated, read
deeper (a budget of pages and seconds, fetched side by side), the second hop by rule, and
why each source was read. Runs go through the real parts in-process: ChatOllama against the
Ollama-protocol server, the searxng provider and web_fetch against a loopback web."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.research._execute import rerank
from local2.research._plan import SKIPPED
from local2.research._prompts import (
    bridge_names,
    excerpt,
    hop_queries,
    relation_words,
    unread_names,
)
from local2.research._state import Found, Source
from local2_testkit.bridge_web import BRIDGE_QUESTION, BridgeWeb, bridge_pages
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, Page, research_overrides
from tests.research.helpers import plan, read, research, search

QUESTION = BRIDGE_QUESTION


@pytest.fixture
def web() -> Iterator[LoopbackWeb]:
    with BridgeWeb(bridge_pages(), max_results=20) as served:
        yield served


def run_once(web: LoopbackWeb, tmp_path: Path, brain: ResearchBrain, **section: Any) -> Any:
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, **section)
        try:
            return run.run(QUESTION, max_rounds=section.pop("max_rounds", 1))
        finally:
            run.close()


def hit(url: str, title: str, text: str) -> Found:
    return Found(url=url, title=title, text=text, kind="result", at=0.0, step="s1")


def page(n: int, title: str, text: str) -> Source:
    return Source(
        n=n,
        url=f"http://x/{n}",
        title=title,
        text=text,
        kind="page",
        found_at=0.0,
        read_at=0.0,
        step="s2",
    )


# --------------------------------------------------------------------------- the reranker


def test_rerank_puts_the_hit_about_the_sub_question_first_and_each_url_once() -> None:
    hits = [
        hit("https://a.example/x", "Weather today", "Rain and wind on the coast."),
        hit("https://b.example/otters", "Otter survey", "The river survey counted 14 otters."),
        hit("https://A.example/x/", "Weather today (again)", "The same page, written again."),
        hit("https://c.example/y", "Bridges", "A swing bridge over the harbour."),
        *(hit(f"https://d.example/{i}", f"Page {i}", "Nothing to see.") for i in range(3)),
        hit("https://e.example/late", "River survey", "The otters of the river survey."),
    ]
    ranked = rerank(hits, "how many otters did the river survey count", "s1")
    assert [h["url"] for h in ranked][:3] == [
        "https://b.example/otters",  # engine rank 2, but about otters: above rank 1
        "https://a.example/x",  # the engine's first, its duplicate (rank 3) gone
        "https://c.example/y",
    ]
    assert ranked[-1]["url"] == "https://d.example/2"  # the engine's order weighs more: the
    assert ranked[-2]["url"] == "https://e.example/late"  # last hit rises one place, no more
    why = ranked[0]["why"]
    assert (why["rank"], why["found_by"], why["query"]) == (
        2,
        "s1",
        "how many otters did the river survey count",
    )
    assert 0 < ranked[-1]["why"]["score"] < why["score"] <= 1
    assert "why" not in hits[1]  # the step's own hits are not changed


def test_rerank_keeps_the_engines_order_when_no_snippet_has_a_word_of_the_query() -> None:
    hits = [hit(f"https://e.example/{i}", f"Page {i}", "nothing relevant here") for i in range(4)]
    ranked = rerank(hits, "otters", "s1")
    assert [h["why"]["rank"] for h in ranked] == [1, 2, 3, 4]


# --------------------------------------------------------------------------- the second hop


def test_the_fallback_hop_searches_the_name_the_question_turns_on() -> None:
    ledger = [
        page(
            1,
            "Kiss and Tell (1945 film)",
            "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley "
            "Temple as Corliss Archer. In the film, two teenage girls worry their parents.",
        ),
        page(
            2,
            "Meet Corliss Archer",
            "Meet Corliss Archer is a radio sitcom. Janet Waldo voiced her.",
        ),
    ]
    names = bridge_names(QUESTION, ledger)
    assert names[0] == "Shirley Temple"
    assert not {"Corliss Archer", "Kiss and Tell", "Kiss", "Tell"} & set(names)  # the question's
    assert relation_words(QUESTION) == "government position held woman portrayed film"
    queries = hop_queries(QUESTION, ledger, done=[], limit=2)
    assert queries[0] == "Shirley Temple government position held woman portrayed film"
    done = {queries[0].lower()}
    assert queries[0] not in hop_queries(QUESTION, ledger, done=done, limit=2)  # never twice
    first, second = hop_queries(QUESTION, ledger[1:], done=[], limit=2)
    assert first == "Janet Waldo government position held woman portrayed film"  # the page's
    assert second.startswith("Kiss ")  # and a name of the question no page read is about
    assert hop_queries("what is it?", [], done=[], limit=2) == []  # no name: no hop


def test_the_hop_takes_the_name_stated_about_the_questions_subject() -> None:
    """The pages that match the question's words best (government, position, woman) name
    others; the bridge is the name the page about the question's subject (the film) states
    beside it, found with BM25 and the sentence splitter alone: no table of roles."""
    ledger = [
        page(
            1,
            "Civil service positions",
            "A government position held by a woman: Margaret Holloway was the first woman "
            "to hold the position of Constitutional Affairs Secretary in the government.",
        ),
        page(
            2,
            "Kiss and Tell (1945 film)",
            "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley "
            "Temple as Corliss Archer. In the film, two teenage girls worry their parents.",
        ),
    ]
    names = bridge_names(QUESTION, ledger)
    assert names[0] == "Shirley Temple"
    assert "Margaret Holloway" not in names  # a page that never mentions the subject
    assert hop_queries(QUESTION, ledger, done=[], limit=1) == [
        "Shirley Temple government position held woman portrayed film"
    ]


def test_a_name_is_on_one_line_and_a_questions_first_word_is_not_one() -> None:
    """A name that ends a line and one that starts the next are two names, not one
    ("Kelsorby Hall\nKelsorby Hall was built"); a lone capitalised word that starts the
    question is its first word, not a subject to look up."""
    question = "Born in 1937, who built the hall where The Velvet Letter was filmed?"
    text = "The Velvet Letter was filmed at Kelsorby Hall\nKelsorby Hall was built by Ines Ward."
    letter = page(1, "The Velvet Letter", text)
    assert bridge_names(question, [letter])[0] == "Kelsorby Hall"
    assert unread_names(question + " In Oskpelmere?", [letter]) == ["Oskpelmere"]


def test_a_prompt_shows_the_passage_of_a_source_that_matters_to_the_question() -> None:
    text = "Opening words about nothing much.\n" * 30 + "Shirley Temple played Corliss Archer."
    shown = excerpt(text, "who played Corliss Archer", 240)
    assert "Shirley Temple played Corliss Archer." in shown and len(shown) <= 242


# --------------------------------------------------------------------------- runs


def test_a_model_that_failed_its_plan_schema_is_not_asked_again_in_the_run(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The first plan fails its schema (and its repair): the reflection and the next plan
    are the rule's at once, each saying why, and the second hop is still made."""
    brain = ResearchBrain(plans=["not json"] * 4, gaps=["no JSON"] * 2)
    payload = run_once(web, tmp_path, brain, max_rounds=2)
    assert brain.requests["plan"] == 2  # the plan and its one repair, once in the run
    assert "gaps" not in brain.requests  # before this change: 2 (a request and its repair)
    first, second = payload["plan"]
    assert first["origin"] == "fallback" and "model_skipped" not in first
    assert second["origin"] == "fallback" and second["model_skipped"] == SKIPPED
    reflected = payload["rounds"][0]
    assert reflected["model_skipped"] == SKIPPED and reflected["origin"] == "fallback"
    assert reflected["gaps"][0].startswith("Shirley Temple ")  # the rule's hop
    assert set(reflected["gaps"]) == set(web.searches()[1:])  # searched side by side
    rounds = [e for e in payload["event_log"] if e["subject"] == "research.round"]
    assert rounds[0]["model_skipped"] == SKIPPED


def test_a_research_search_asks_for_more_results_than_the_chat_search(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The chat's web_search keeps web.search.max_results (5); a research search asks for
    research.search_results, so the read can pick among all ten pages the engine found."""
    brain = ResearchBrain(plans=[plan(search("s1", QUESTION), read("s2", "s1", 1, "s1"))])
    payload = run_once(web, tmp_path, brain, search_results=15, fetch_count=1)
    found = next(s for s in payload["steps"] if s["id"] == "s1")
    assert found["sources"] == len(web.rank(QUESTION)) == 10
    settings = load_settings(overrides=research_overrides(web, tmp_path / "chat"))
    assert settings.web.search.max_results == 5  # what a chat turn's search still keeps


def test_a_read_step_reads_its_share_of_the_rounds_fetch_budget(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The plan says top 1; the round's budget of 4 pages is the read's to spend: the four
    best results by the reranker, each once, every one in the ledger with why it was read."""
    brain = ResearchBrain(plans=[plan(search("s1", QUESTION), read("s2", "s1", 1, "s1"))])
    payload = run_once(web, tmp_path, brain, fetch_count=4, file_results=2)
    served = web.pages_served()
    assert len(served) == len(set(served)) == 4
    pages = [s for s in payload["sources"] if s["kind"] == "page"]
    assert len(pages) == 4
    assert all(s["found_by"] == "s1" and s["query"] == QUESTION for s in pages)
    scores = [s["score"] for s in sorted(pages, key=lambda s: -s["score"])]
    assert all(s is not None and 0 < s <= 1 for s in scores)
    ranks = {s["rank"] for s in pages}
    assert len(ranks) == 4 and all(1 <= r <= 10 for r in ranks)
    assert "kiss_and_tell" in served  # the one page that names her is among the best
    assert "rank " in payload["report"] and f'in s1 "{QUESTION}"' in payload["report"]


class FixedOrder(LoopbackWeb):
    """An engine whose order the test sets (a real one ranks by what no snippet shows)."""

    order: tuple[str, ...] = ()

    def rank(self, query: str) -> list[Page]:
        return [self.pages[name] for name in self.order]


def article(name: str, title: str, text: str) -> Page:
    body = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
    return Page(name, title, f"{body}<p>{text}</p></article></body></html>", text)


def test_a_read_skips_results_that_do_not_match_and_stops_short_of_its_share(
    tmp_path: Path,
) -> None:
    """Ten results; the read's share of the round is 5. The two the engine ranks first and
    the tenth match the query in their titles and snippets; ranks 3 to 9 have none of its
    words. The read takes those three and no other: a fixed count would have read five,
    the tenth not among them."""
    survey = "The Lune otter survey counted 14 otters along the river in its first year."
    pages = [
        article("a-survey", "Lune otter survey", survey),
        article("b-count", "Otter count on the Lune", survey),
        *(
            article(f"f{i}-notes", f"Harbour notes {i}", "Ferries, tides and the old quay. " * 9)
            for i in range(3, 10)
        ),
        article("z-report", "Lune otter survey: the count", survey),
    ]
    brain = ResearchBrain(
        plans=[plan(search("s1", "Lune otter survey count"), read("s2", "s1", 2, "s1"))]
    )
    with FixedOrder(pages, max_results=10) as web:
        web.order = tuple(p.name for p in pages)
        payload = run_once(web, tmp_path, brain, fetch_count=5)
        served = web.pages_served()
    assert sorted(served) == ["a-survey", "b-count", "z-report"]
    read_pages = [s for s in payload["sources"] if s["kind"] == "page"]
    assert sorted(s["rank"] for s in read_pages) == [1, 2, 10]
    skipped = [s for s in payload["sources"] if s["kind"] == "result"]
    assert skipped and all(s["title"].startswith("Harbour notes") for s in skipped)


def test_a_url_two_searches_found_is_read_once(web: LoopbackWeb, tmp_path: Path) -> None:
    """Two searches find the same pages; their reads, side by side, never fetch one twice."""
    brain = ResearchBrain(
        plans=[
            plan(
                search("s1", "film government position"),
                search("s2", "government position film"),
                read("s3", "s1", 2, "s1"),
                read("s4", "s2", 2, "s2"),
            )
        ]
    )
    payload = run_once(web, tmp_path, brain, fetch_count=4)
    served = web.pages_served()
    assert len(served) == len(set(served)) == 4  # two searches' top results are the same pages
    by = {
        s["url"].rsplit("/", 1)[-1]: s["found_by"]
        for s in payload["sources"]
        if s["kind"] == "page"
    }
    assert set(by) == set(served) and set(by.values()) == {"s1", "s2"}


def test_a_read_steps_pages_are_fetched_side_by_side(web: LoopbackWeb, tmp_path: Path) -> None:
    """Each page waits until three are being fetched at once: read one after another, the
    first would wait in vain and fail (503); side by side, all three are read."""
    web.page_barrier = threading.Barrier(3, timeout=8)
    brain = ResearchBrain(plans=[plan(search("s1", QUESTION), read("s2", "s1", 3, "s1"))])
    payload = run_once(web, tmp_path, brain, fetch_count=3, fetch_workers=3, max_replans=0)
    reads = next(s for s in payload["steps"] if s["id"] == "s2")
    assert reads["status"] == "done" and [c["error"] for c in reads["calls"]] == [None] * 3
    assert sum(s["kind"] == "page" for s in payload["sources"]) == 3


def test_a_fetch_past_the_seconds_budget_is_recorded_as_skipped(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """One page answers long after the read step's budget of seconds: the step goes on with
    the others, and that fetch is in the step's record as skipped, not lost."""
    slow = web.rank(QUESTION)[0].name
    web.slow_pages = {slow: 20.0}
    brain = ResearchBrain(plans=[plan(search("s1", QUESTION), read("s2", "s1", 3, "s1"))])
    payload = run_once(web, tmp_path, brain, fetch_count=3, fetch_seconds=2.0)
    reads = next(s for s in payload["steps"] if s["id"] == "s2")
    assert reads["status"] == "done"
    errors = {c["args"]["url"].rsplit("/", 1)[-1]: c["error"] for c in reads["calls"]}
    assert set(errors) >= {slow}
    assert errors[slow] == "skipped: the read budget of 2s was spent"
    assert [e for name, e in errors.items() if name != slow] == [None] * (len(errors) - 1)
    read_pages = {s["url"].rsplit("/", 1)[-1] for s in payload["sources"] if s["kind"] == "page"}
    assert slow not in read_pages and len(read_pages) == len(errors) - 1


def test_the_app_and_the_report_say_why_each_source_was_read() -> None:
    from local2.research._verify import references_markdown
    from local2.ui._research_shown import sources_markdown

    why = {"found_by": "s4", "query": "Shirley Temple government", "rank": 3, "score": 0.8125}
    source = {**page(2, "Shirley Temple", "She served as Chief of Protocol."), "why": why}
    said = 'rank 3 in s4 "Shirley Temple government", score 0.81'
    assert said in references_markdown([source])
    listed = {"n": 2, "title": "Shirley Temple", "url": "https://x.example/st", "kind": "page"}
    shown = sources_markdown([{**listed, **why}])
    assert (
        "rank 3 in s4" in shown and "score 0.81" in shown and "Shirley Temple government" in shown
    )
    assert "rank" not in sources_markdown([listed])  # a source no search found: nothing made up
