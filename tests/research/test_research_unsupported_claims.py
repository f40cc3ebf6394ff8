"""A report never says more than its sources (issue 52), end to end: the real ChatOllama
against the test kit's Ollama-protocol server writes a report with planted claims, the real
searxng provider and web_fetch read a loopback web of captured pages, and the published
report keeps only what the pages it cites say. Claims with no name or number are held to
their sources too: an uncited claim is unsupported, and so is one citing a page about
something else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local2.config import load_settings
from local2.research._verify import UNCITED
from local2.service.research._research import Research
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "Why did Kelsby keep its harbour swing bridge?"
BRIDGE_PAGE = "01_harbour_bridge"

# Claims no source supports, none of them with a name or number for the old check to catch.
UNCITED_CLAIMS = [
    "It is widely regarded as a triumph of common sense.",
    "The swing bridge was kept because tourists love it.",
]
ELSEWHERE_CLAIMS = [  # each cites the bridge page, which says nothing of the kind
    "Otters have returned to the river in large numbers [1].",
    "Critics praised the decision as brave and far-sighted [1].",
    "Eels and salmon swim under the bridge every spring [1].",
]
# What the bridge page does say, in the writer's own order and words, cited.
PARAPHRASE = "Residents voted to repair the iron swing bridge rather than replace it [1]."
# Sentences that state nothing: they stay without a citation.
NOT_CLAIMS = [
    "This report looks at why Kelsby would keep its harbour swing bridge.",
    "The sources do not say who will run the ferry.",
]


def run_report(tmp_path: Path, extra: list[str]) -> tuple[dict[str, Any], list[Any]]:
    with LoopbackWeb(load_pages(CORPUS)) as web, FakeOllama(ResearchBrain(extra=extra)) as fake:
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update({"max_rounds": 1})
        run = Research(load_settings(overrides=overrides), backend="ollama")
        try:
            payload = run.run(QUESTION)
            config = {"configurable": {"thread_id": payload["run_id"]}}
            ledger = run.graph.get_state(config).values["ledger"]
        finally:
            run.close()
    return payload, ledger


def test_planted_claims_are_removed_and_listed_and_supported_sentences_survive(
    tmp_path: Path,
) -> None:
    planted = UNCITED_CLAIMS + ELSEWHERE_CLAIMS
    payload, ledger = run_report(tmp_path, [*planted, PARAPHRASE, *NOT_CLAIMS])
    bridge = next(s for s in ledger if BRIDGE_PAGE in s["url"])
    assert bridge["n"] == 1 and bridge["kind"] == "page"  # what the planted [1] points at
    body = payload["report"].split("## References")[0]
    reasons = {u["sentence"]: u["reason"] for u in payload["unsupported"]}

    for claim in planted:
        assert claim not in body
    assert all(reasons[c] == UNCITED for c in UNCITED_CLAIMS)
    for claim in ELSEWHERE_CLAIMS:
        assert reasons[claim].startswith("the cited source [1] does not say this"), reasons[claim]
    removed = payload["report"].split("## Removed as unsupported")[1]
    assert all(f"~~{c}~~" in removed for c in planted)  # shown to the person, with why

    # The model's own true sentences survive: the page's opening, cited; a paraphrase of
    # it; the heading; and the sentences that state nothing.
    assert "## Findings" in body
    assert "Residents of Kelsby voted on Tuesday to repair rather than replace" in body
    assert PARAPHRASE in body
    assert all(s in body for s in NOT_CLAIMS)
    assert not set(reasons) & {PARAPHRASE, *NOT_CLAIMS}
    assert payload["citations"] >= 2


def test_a_report_of_only_unsupported_claims_says_so(tmp_path: Path) -> None:
    """A run whose every sentence is planted shows no model text as findings."""

    class OnlyPlanted(ResearchBrain):
        def _report(self, request: dict[str, Any]) -> str:
            return "\n\n".join(UNCITED_CLAIMS + ELSEWHERE_CLAIMS)

    with LoopbackWeb(load_pages(CORPUS)) as web, FakeOllama(OnlyPlanted()) as fake:
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update({"max_rounds": 1})
        run = Research(load_settings(overrides=overrides), backend="ollama")
        try:
            payload = run.run(QUESTION)
        finally:
            run.close()
    assert payload["citations"] == 0
    assert len(payload["unsupported"]) == len(UNCITED_CLAIMS + ELSEWHERE_CLAIMS)
    body = payload["report"].split("## References")[0]
    assert "No statement survived verification" in body
    assert not any(c in body for c in UNCITED_CLAIMS + ELSEWHERE_CLAIMS)
