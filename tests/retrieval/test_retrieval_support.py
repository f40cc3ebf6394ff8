"""The one check of support (``local2.retrieval._relevance``): a claim's numbers and names must be
in its evidence, and its content words in one passage of it; research's verify and the
critic's grounding check ask it the same way."""

from __future__ import annotations

from local2.critic import grounding_flags
from local2.research._state import Found, file_sources
from local2.research._verify import verify
from local2.retrieval import as_written, check_support, split_passages, unstated_numbers
from local2.retrieval._relevance import allowed_missing

PAGE = (
    "Felix Kelsorby\n"
    "Felix Kelsorby (1917-1984) was a Belgian stage and screen actor. She spent her early "
    "career touring with a small company in Corrow. She was born in Oskpelmere."
)


def test_a_claim_sharing_only_names_and_numbers_is_not_supported() -> None:
    claim = "Felix Kelsorby directed three operas in 1917."
    found = check_support(claim, [PAGE])
    assert found.numbers == [] and found.names == []  # the old check saw nothing wrong
    assert as_written(claim, found.words) == ["directed", "three", "operas"]
    assert not found.supported


def test_the_sources_title_names_what_its_sentences_say_she_did() -> None:
    found = check_support("Felix Kelsorby was born in Oskpelmere.", [PAGE])
    assert found.supported and found.words == []
    # The writer's own words around what the page says: one in four may be theirs.
    assert check_support(
        "The Belgian actor toured with a small company early on.", [PAGE]
    ).supported
    assert allowed_missing(3) == 0 and allowed_missing(4) == 1 and allowed_missing(8) == 2


def test_the_words_must_be_in_one_passage_not_scattered_over_a_page() -> None:
    filler = " ".join(f"Paragraph {i} is about tides and nothing else at all." for i in range(40))
    page = (
        "Harbour notes\nThe ferry leaves from the north pier.\n"
        f"{filler}\nThe lighthouse keeper paints boats."
    )
    assert len(split_passages(page.partition("\n")[2])) > 3
    assert check_support("The lighthouse keeper paints boats.", [page]).supported
    scattered = check_support("The ferry keeper paints the north pier.", [page])
    assert not scattered.supported  # "ferry" and "pier" in one passage, "paints" in another
    # A long sentence the passages cut in two is still one place on the page.
    long = "The ferry leaves " + "and returns " * 70 + "from the north pier at dawn."
    cut = split_passages(long)
    assert len(cut) == 2 and "ferry" in cut[0] and "dawn" in cut[1]
    assert check_support(
        "The ferry leaves from the north pier at dawn.", [f"Notes\n{long}"]
    ).supported


def test_numbers_are_compared_in_one_normal_form() -> None:
    evidence = "Version 3.3.1 shipped to 48,000 users on the 2nd, in the 1980s style."
    assert unstated_numbers("Version 3.3.2 reached 48000 users", evidence) == ["3.3.2"]
    assert unstated_numbers("It came on the 2nd, a 1980s look", evidence) == []
    assert unstated_numbers("It took 3 days", evidence) == ["3"]
    assert unstated_numbers("It took 3 days", evidence, shortest=2) == []


def test_verify_and_the_critics_grounding_flag_the_same_figures() -> None:
    evidence = "Python 3.13 was released in 2024 and is used by 48,000 teams."
    answer = "Python 3.13.1 came out in 2024, and 48000 teams use it."
    call = {"tool": "web_fetch", "args": {"url": "https://py.example/"}, "result": evidence}
    flags = grounding_flags(answer, [call])  # type: ignore[list-item]
    assert flags == ["unsupported figure: 3.13.1 (in no tool result or message)"]
    page = Found(
        url="https://py.example/", title="Python", text=evidence, kind="page", at=1.0, step="s"
    )
    entries, _ = file_sources([], [page], max_sources=2)
    (removed,) = verify(f"{answer.rstrip('.')} [1].", entries, "").unsupported
    assert removed.reason == "'3.13.1' not in the cited source [1]"
