"""Research follows each of a question's chains (issue 55).

The rule on hand-written text: a question's subjects (the alternatives it offers, else its
names), the page read about each, the bridge that page names near the question's relation
words, and the next search of each chain not complete. Then the whole capability: ``local2
research`` (a real process, ChatOllama against the test kit's Ollama-protocol server, a
loopback search and pages) on a two-bridge comparison whose answer needs four pages, both
films and both directors; the directors' pages share no word with the question, so only a
search for each film's director finds them, and the film pages name actors beside the
director, which the question's words alone weigh as much.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local2.research._state import Source
from local2.research.chains import (
    bridge_of,
    chain_queries,
    chains,
    offers_choice,
    page_about,
    relation_terms,
    subjects,
)
from local2_testkit.bridge_web import BridgeWeb, page_html
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import Page
from tests.kit.helpers import local2
from tests.research.helpers import environment

QUESTION = (
    "Which film has the director who was born later, The Glass Orchard or Midnight at Pell Street?"
)
ORCHARD = (
    "The Glass Orchard (1961 film)",
    [
        "The Glass Orchard is a 1961 Danish drama film starring Ole Brink and Mette Lund, "
        "made at Nordlys Studio in Aarhus.",
        "It was directed by Hanne Vestergaard from a novel by Karen Holst.",
    ],
)
PELL = (
    "Midnight at Pell Street",
    [
        "Midnight at Pell Street is a 1958 American crime film starring Dana Whitcombe and "
        "Lou Farrante, made at Ridgeway Pictures in New Jersey.",
        "The film was directed by Arthur Kellan and scored by Mo Rainer.",
    ],
)
# The directors' pages: no word of the question ("film", "director", "born"), so a search
# for the question never finds them; only a search for each one's name does.
VESTERGAARD = (
    "Hanne Vestergaard",
    ["Hanne Vestergaard (3 May 1920 – 8 June 1999) was a Danish stage and screen artist."],
)
KELLAN = (
    "Arthur Kellan",
    ["Arthur Kellan (14 October 1911 – 2 March 1980) was an American stage artist."],
)
VESTERGAARD_FACT = "Hanne Vestergaard (3 May 1920 – 8 June 1999)"
KELLAN_FACT = "Arthur Kellan (14 October 1911 – 2 March 1980)"


def source(n: int, title: str, text: str, kind: str = "page") -> Source:
    return Source(
        n=n, url=f"https://x.example/{n}", title=title, text=text, kind=kind, found_at=0.0,
        read_at=0.0, step="s1",
    )  # fmt: skip


def as_source(n: int, page: tuple[str, list[str]]) -> Source:
    return source(n, page[0], " ".join(page[1]))


# ------------------------------------------------------------------------------ the rule


def test_the_subjects_are_the_alternatives_a_question_offers_else_its_names() -> None:
    assert subjects(QUESTION) == ["The Glass Orchard", "Midnight at Pell Street"]
    assert offers_choice(QUESTION)
    # no comma before the alternatives: the capitalised run before "or"
    assert subjects("Which lake is deeper Lake Orvel or Lake Sunmere?") == [
        "Lake Orvel",
        "Lake Sunmere",
    ]
    # no alternatives: the names it gives ("Where" starts it and is one word: not a name)
    assert subjects("Where did Tomas Reinholt's wife die?") == ["Tomas Reinholt's"]
    assert not offers_choice("Where did Tomas Reinholt's wife die?")
    assert subjects("What did the lighthouse keeper of Wrenholm see?") == ["Wrenholm"]


def test_the_page_about_a_subject_is_the_one_its_title_names() -> None:
    ledger = [
        source(1, "Orchard (disambiguation)", "An orchard is planted land."),
        as_source(2, ORCHARD),
        source(3, "The Glass Orchard (novel)", "A novel.", kind="result"),  # not read
    ]
    found = page_about("The Glass Orchard", ledger)
    assert found is not None and found["n"] == 2
    assert page_about("Midnight at Pell Street", ledger) is None


def test_each_subjects_bridge_is_the_name_its_page_gives_near_the_questions_relation() -> None:
    relation = relation_terms(QUESTION, subjects(QUESTION))
    assert {"film", "director", "born", "later"} <= relation
    # "directed by Hanne Vestergaard": "directed" and "director" are one relation; the
    # actors, the studio and the novelist are names too, but no relation word is near them
    # ("Danish", a single word before "drama", describes the film)
    assert bridge_of(QUESTION, as_source(1, ORCHARD), relation) == ["Hanne Vestergaard"]
    assert bridge_of(QUESTION, as_source(2, PELL), relation) == ["Arthur Kellan"]
    wife = source(1, "Tomas Reinholt", "Tomas Reinholt was a painter. His wife Ingrid Sol wrote.")
    question = "Where did Tomas Reinholt's wife die?"
    assert bridge_of(question, wife, relation_terms(question, subjects(question))) == ["Ingrid Sol"]
    # a page that has no relation word near a name gives no bridge
    plain = source(1, "Tomas Reinholt", "Tomas Reinholt was a painter from Bergen Harbour.")
    assert bridge_of(question, plain, relation_terms(question, subjects(question))) == []


def test_the_next_search_of_each_chain_until_each_bridge_page_is_read() -> None:
    films = [as_source(1, ORCHARD), as_source(2, PELL)]
    # both films read: each one's director next, in the question's order
    assert chain_queries(QUESTION, films, 3) == [
        "Hanne Vestergaard film director born later",
        "Arthur Kellan film director born later",
    ]
    # one director read: that chain is complete
    one = [*films, as_source(3, VESTERGAARD)]
    assert chain_queries(QUESTION, one, 3) == ["Arthur Kellan film director born later"]
    assert [c.done for c in chains(QUESTION, one)] == [True, False]
    # every chain complete: nothing more to search
    assert chain_queries(QUESTION, [*one, as_source(4, KELLAN)], 3) == []
    # a film not read yet: its own page first (its bridge is known only once it is read)
    assert chain_queries(QUESTION, films[:1], 3) == [
        "Hanne Vestergaard film director born later",
        "Midnight at Pell Street film director born later",
    ]
    assert chain_queries(QUESTION, films, 1) == ["Hanne Vestergaard film director born later"]


# ---------------------------------------------------------------------- the whole capability


def two_chains_web() -> list[Page]:
    pages = {"orchard": ORCHARD, "pell": PELL, "vestergaard": VESTERGAARD, "kellan": KELLAN}
    crowd = [
        ("film_history", "A history of film", "film director born later history"),
        ("born_later", "Born later (1990 film)", "born later film sequel director"),
        ("directors_guild", "The directors guild", "director film guild born members"),
        ("orchard_care", "Orchard care", "orchard glass street midnight trees"),
    ]
    out = [Page(k, t, page_html(t, ps), " ".join(ps)) for k, (t, ps) in pages.items()]
    for name, title, words in crowd:
        text = [f"This page is about {words}.", f"It says more about the {words.split()[0]}."]
        out.append(Page(name, title, page_html(title, text), " ".join(text)))
    return out


def run_research(web: BridgeWeb, brain: ResearchBrain, tmp_path: Path) -> dict[str, Any]:
    with FakeOllama(brain) as fake:
        result = local2(
            "research", QUESTION, "--json", "--backend", "ollama",
            env=environment(web, tmp_path, fake.url),
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def test_a_two_bridge_comparison_reads_both_films_and_both_directors(tmp_path: Path) -> None:
    brain = ResearchBrain(gaps=[[]])  # the reflecting model answers that nothing is missing
    with BridgeWeb(two_chains_web(), max_results=10) as web:
        ranked = [p.name for p in web.rank(QUESTION)]
        assert "vestergaard" not in ranked and "kellan" not in ranked  # not by the question
        payload = run_research(web, brain, tmp_path)
        searches = web.searches()
        served = web.pages_served()
    assert searches[0] == QUESTION[:100]  # the scripted plan searches the question
    assert {"orchard", "pell", "vestergaard", "kellan"} <= set(served)  # all four pages
    hops = payload["rounds"][0]
    assert hops["origin"] == "hop"  # the rule's, the model named none
    assert {g.split(" film ")[0] for g in hops["gaps"]} >= {"Hanne Vestergaard", "Arthur Kellan"}
    composed = brain.prompts["compose"][0]
    assert VESTERGAARD_FACT in composed and KELLAN_FACT in composed  # both dates reach the model
    # reading pays for itself: the hop reads each director's page, not more of its results
    hop_reads = [s for s in payload["steps"] if s["round"] == 2 and s["tool"] == "web_fetch"]
    assert hop_reads and all(s["sources"] == 1 for s in hop_reads)
    assert brain.requests["plan"] == 1 and brain.requests["gaps"] == 1  # the hop asked neither
