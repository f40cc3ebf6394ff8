"""``local2 research`` on a bridge question, as a person runs it: a real process, the
Ollama-protocol server, a loopback SearXNG-protocol search and pages. The page that answers
(Shirley Temple's) shares no word with the question, so only the second hop's search finds
it. The hop is the rule's both when the reflecting model fails its schema and when it
answers that nothing is missing."""

from __future__ import annotations

import json
from pathlib import Path

from local2.research._report import HOP_READ
from local2_testkit.bridge_web import (
    BRIDGE_FACT,
    BRIDGE_PAGE,
    BRIDGE_QUESTION,
    BridgeWeb,
    bridge_pages,
)
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.kit.helpers import local2
from tests.research.helpers import environment


def test_the_second_hop_reads_and_cites_the_page_only_the_bridging_name_finds(
    tmp_path: Path,
) -> None:
    brain = ResearchBrain(gaps=["no JSON here", "still no JSON"])  # reflection fails twice
    with BridgeWeb(bridge_pages(), max_results=20) as web, FakeOllama(brain) as fake:
        assert BRIDGE_PAGE not in {p.name for p in web.rank(BRIDGE_QUESTION)}  # not by the question
        result = local2(
            "research",
            BRIDGE_QUESTION,
            "--json",
            "--max-rounds",
            "2",
            "--backend",
            "ollama",
            env=environment(web, tmp_path, fake.url),
        )
        searches = web.searches()
        served = web.pages_served()
        answer_url = web.page_url(BRIDGE_PAGE)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert searches[0] == BRIDGE_QUESTION[:100]  # the scripted plan searches the question
    # the name the film's page gives, searched (the rule's hops run side by side)
    hops = [s for s in searches[1:] if s.startswith("Shirley Temple ")]
    assert len(hops) == 1
    hop = hops[0]
    assert BRIDGE_PAGE in served
    source = next(s for s in payload["sources"] if s["url"] == answer_url)
    assert source["kind"] == "page" and source["query"] == hop
    assert source["found_by"] in {s["id"] for s in payload["steps"] if s["round"] == 2}
    body = payload["report"].split("## References")[0]
    assert "Shirley Temple Black was an American actress, singer and dancer" in body
    assert f"[{source['n']}]" in body  # read, and cited
    assert BRIDGE_FACT in brain.prompts["compose"][0]  # the answer reached the model
    assert payload["rounds"][0]["origin"] == "fallback" and payload["rounds"][0]["gaps"][0] == hop
    shown = brain.prompts["gaps"][0]  # the reflecting model was shown the name, too
    assert "Not read about yet: Shirley Temple" in shown


def test_a_model_that_names_no_gaps_still_gets_the_second_hop_read(tmp_path: Path) -> None:
    """The reflecting model answers in its schema that nothing is missing (the scripted
    planner of the evidence bench): the rule searches the name the film's page gives once,
    plans that round itself, reads the answer's page and composes without asking again."""
    brain = ResearchBrain(gaps=[[]])
    with BridgeWeb(bridge_pages(), max_results=20) as web, FakeOllama(brain) as fake:
        result = local2(
            "research",
            BRIDGE_QUESTION,
            "--json",
            "--backend",
            "ollama",
            env=environment(web, tmp_path, fake.url),
        )
        searches = web.searches()
        answer_url = web.page_url(BRIDGE_PAGE)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    first, hop_round = payload["rounds"]
    assert first["origin"] == "hop" and first["gaps"][0].startswith("Shirley Temple ")
    assert hop_round["stop"] == HOP_READ and hop_round["gaps"] == []
    assert [p["origin"] for p in payload["plan"]] == ["model", "hop"]
    assert brain.requests["plan"] == 1 and brain.requests["gaps"] == 1  # the hop asked neither
    assert set(first["gaps"]) == set(searches[1:])
    hop_reads = [s for s in payload["steps"] if s["round"] == 2 and s["tool"] == "web_fetch"]
    share = -(-8 // len(hop_reads))  # research.fetch_count (8), shared by the round's reads
    assert hop_reads and all(s["sources"] <= share for s in hop_reads)  # as every read reads
    source = next(s for s in payload["sources"] if s["url"] == answer_url)
    assert source["kind"] == "page" and source["query"] == first["gaps"][0]
    body = payload["report"].split("## References")[0]
    assert f"[{source['n']}]" in body  # read, and cited
    assert BRIDGE_FACT in brain.prompts["compose"][0]
