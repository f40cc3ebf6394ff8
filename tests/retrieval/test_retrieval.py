"""The retrieval part's pieces: BM25 on bm25s with Okapi's scale, reciprocal-rank fusion,
the one sentence splitter and its options, the number patterns, a text's best passage."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from local2.retrieval import (
    Bm25,
    best_passage,
    bm25_scores,
    ends_sentence,
    fuse,
    numbers,
    sentences,
    terms,
)


def okapi(docs: list[list[str]], query: set[str], k1: float, b: float) -> list[float]:
    """Okapi BM25 with Lucene's idf, written out: what the library's scores must equal."""
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    df = Counter(t for d in docs for t in set(d) & query)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query if df[t]}
    out = []
    for d in docs:
        c = Counter(t for t in d if t in idf)
        norm = k1 * (1 - b + b * len(d) / avg)
        out.append(sum(idf[t] * f * (k1 + 1) / (f + norm) for t, f in c.items()))
    return out


def test_bm25_scores_are_okapis_for_any_k1_and_b() -> None:
    texts = ["the harbour bridge", "the harbour ferry ferry", "harbour", "a storm at sea", ""]
    docs = [terms(t) for t in texts]
    query = set(terms("ferry harbour storm"))
    for k1, b in ((1.2, 0.75), (1.5, 0.3), (0.9, 1.0)):
        got = bm25_scores(docs, query, k1=k1, b=b)
        want = okapi(docs, query, k1, b)
        assert all(abs(g - w) < 1e-5 for g, w in zip(got, want, strict=True)), (k1, b)


def test_bm25_top_breaks_ties_by_position_and_skips_non_matches() -> None:
    index = Bm25([["a", "b"], ["c"], ["a", "b"], ["a", "b"]], k1=1.2, b=0.75)
    assert [i for i, _ in index.top(["a"], 5)] == [0, 2, 3]
    assert index.top(["zzz"], 5) == [] and Bm25([], k1=1.2, b=0.75).top(["a"], 3) == []


def test_a_kept_bm25_index_scores_as_the_one_built(tmp_path: Path) -> None:
    docs = [terms(t) for t in ("the harbour bridge", "the harbour ferry ferry", "a storm")]
    built = Bm25(docs, k1=1.2, b=0.75)
    built.save(tmp_path / "kept")
    kept = Bm25.load(tmp_path / "kept", 3, k1=1.2, b=0.75)
    query = terms("ferry harbour storm")
    assert kept.scores(query).tolist() == built.scores(query).tolist()
    assert kept.top(query, 2) == built.top(query, 2)
    with pytest.raises(ValueError, match="another index"):
        Bm25.load(tmp_path / "kept", 3, k1=1.5, b=0.75)  # not this one: built again


def test_fuse_adds_reciprocal_ranks_and_keeps_each_rank() -> None:
    fused = fuse([["a", "b", "c"], ["c", "a"]], k=60)
    assert [f.item for f in fused] == ["a", "c", "b"]
    assert fused[0].ranks == (1, 2) and fused[2].ranks == (2, None)
    assert abs(fused[0].score - (1 / 61 + 1 / 62)) < 1e-12


def test_one_sentence_splitter_for_every_use() -> None:
    text = "My dentist is Dr. Okafor. I like Ursula K. Le Guin! See 127.0.0.1. e.g. this"
    assert sentences(text) == [
        "My dentist is Dr. Okafor.",
        "I like Ursula K. Le Guin!",
        "See 127.0.0.1.",
        "e.g. this",
    ]
    assert sentences(text, capital=True)[-1] == "See 127.0.0.1. e.g. this"
    assert sentences("One. two\nthree") == ["One.", "two\nthree"]
    assert sentences("One. two\nthree", lines=True) == ["One.", "two", "three"]
    assert sentences("One. two. Three", capital=True) == ["One. two.", "Three"]
    assert sentences("A; b: c", ends=".!?;:") == ["A;", "b:", "c"]
    assert ends_sentence('He left."') and not ends_sentence("cut short")


def test_number_patterns() -> None:
    assert numbers("In 1,450 towns, 3,5 % and the 2nd") == ["1450", "3.5", "2"]
    assert numbers("v3.3.2 costs 48,000 or 1.99 in 2024 (v2, 2nd), 3.3.2 in the 1980s") == [
        "48000",
        "1.99",
        "2024",
        "2",
        "3.3.2",
        "1980",
    ]


def test_best_passage_is_the_sentence_that_answers_with_its_neighbours() -> None:
    filler = " ".join(f"Sentence {n} is about the harbour wall." for n in range(30))
    text = f"{filler} The Kestrel valve is rated for 412 kPa. {filler}"
    shown = best_passage(text, "Kestrel valve pressure rating", 200)
    assert "The Kestrel valve is rated for 412 kPa." in shown and len(shown) <= 200
    assert shown.startswith("… ")
    assert best_passage("Short text.", "anything", 200) == "Short text."
    assert best_passage(text, "nothing matches zzz", 50).startswith("Sentence 0")
