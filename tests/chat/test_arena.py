"""Arena ratings: Bradley-Terry fitted on votes, with honest intervals, and the vote log
(one contract over SQLite, Postgres and a LangGraph store)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from local2.arena._ratings import rate, strengths
from local2.arena._report import arena, as_csv, as_json
from local2.storage._votes import SqliteVoteLog, StoreVoteLog, VoteLog


def by_model(rows):  # type: ignore[no-untyped-def]
    return {r.model: r for r in rows}


def test_sixty_forty_is_seventy_points_apart_like_elo() -> None:
    games = [("x", "y", "a")] * 600 + [("x", "y", "b")] * 400
    rows = by_model(rate(games))
    # Bradley-Terry: odds 60:40 = 1.5, and 400 points are 10:1, so 400*log10(1.5) apart.
    assert rows["x"].rating - rows["y"].rating == pytest.approx(400 * math.log10(1.5), abs=0.5)
    assert (rows["x"].rating + rows["y"].rating) / 2 == pytest.approx(1000, abs=0.2)
    assert (rows["x"].wins, rows["x"].losses, rows["x"].votes) == (600, 400, 1000)


def test_a_tie_is_half_a_win_and_the_order_of_a_pair_does_not_matter() -> None:
    forward = by_model(rate([("x", "y", "a"), ("x", "y", "tie"), ("y", "x", "b")]))
    # The same three games written with the models swapped.
    backward = by_model(rate([("y", "x", "b"), ("y", "x", "tie"), ("x", "y", "a")]))
    assert forward["x"].rating == backward["x"].rating
    ties = by_model(rate([("x", "y", "tie")] * 10))
    assert ties["x"].rating == pytest.approx(ties["y"].rating)
    assert ties["x"].ties == 10


def test_a_model_that_always_won_gets_a_finite_rating_and_a_wide_interval() -> None:
    one = by_model(rate([("x", "y", "a")]))
    assert math.isfinite(one["x"].rating) and one["x"].rating > one["y"].rating
    assert one["x"].ci_high - one["x"].ci_low > 400  # one vote says little
    many = by_model(rate([("x", "y", "a")] * 30 + [("x", "y", "b")] * 10))
    # More votes: narrower intervals, and still finite.
    assert many["x"].ci_high - many["x"].ci_low < one["x"].ci_high - one["x"].ci_low
    assert many["x"].ci_low > many["y"].ci_high  # 30:10 separates them


def test_strengths_match_the_maximum_likelihood_equations() -> None:
    games = [("x", "y", "a")] * 5 + [("y", "z", "a")] * 3 + [("z", "x", "a")] * 2
    p = strengths(games, prior=0.0 + 1e-9)
    # At the maximum, each model's points equal its expected points.
    for model in p:
        points = sum(
            (1.0 if (a == model) == (w == "a") else 0.0) for a, b, w in games if model in (a, b)
        )
        expected = sum(
            p[model] / (p[model] + p[b if a == model else a])
            for a, b, _ in games
            if model in (a, b)
        )
        assert points == pytest.approx(expected, rel=1e-4)


def test_same_model_on_both_sides_is_not_a_game() -> None:
    assert rate([("x", "x", "a")]) == []


@pytest.fixture(params=["sqlite", "postgres", "store"])
def vote_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VoteLog]:
    """The three places votes are kept: SQLite (default), the team's Postgres (the real
    throwaway cluster), LangGraph Server's store."""
    if request.param == "store":
        store = InMemoryStore()
        yield StoreVoteLog(lambda: store)
        return
    if request.param == "sqlite":
        log: VoteLog = SqliteVoteLog(tmp_path / "db.sqlite")
    else:
        from local2.storage._postgres import open_postgres_votes

        log = open_postgres_votes(request.getfixturevalue("postgres_url"))
    yield log
    log.close()


def test_vote_log_contract(vote_log: VoteLog) -> None:
    assert vote_log.votes() == []
    vote = {"session_id": "s", "model_a": "x", "model_b": "y"}
    vote_log.record(query_id="q", voter="person", winner="a", **vote)
    vote_log.record(query_id="q", voter="person", winner="b", **vote)  # changed their mind
    vote_log.record(query_id="q", voter="judge", winner="tie", **vote)
    vote_log.record(query_id="q2", voter="judge", winner="a", **vote)
    assert [(v.query_id, v.voter, v.winner) for v in vote_log.votes()] == [
        ("q", "person", "b"),
        ("q", "judge", "tie"),
        ("q2", "judge", "a"),
    ]
    assert [v.winner for v in vote_log.votes("person")] == ["b"]
    assert [v.query_id for v in vote_log.votes("judge")] == ["q", "q2"]
    with pytest.raises(ValueError, match="winner"):
        vote_log.record(query_id="q", voter="judge", winner="c", **vote)
    with pytest.raises(ValueError, match="voter"):
        vote_log.record(query_id="q", voter="crowd", winner="a", **vote)  # type: ignore[arg-type]
    assert len(vote_log.votes()) == 3


def test_sqlite_votes_outlive_the_process(tmp_path: Path) -> None:
    log = SqliteVoteLog(tmp_path / "db.sqlite")
    log.record(session_id="s", query_id="q", voter="judge", model_a="x", model_b="y", winner="a")
    log.close()
    reopened = SqliteVoteLog(tmp_path / "db.sqlite")
    assert [v.winner for v in reopened.votes()] == ["a"]
    reopened.close()


def test_people_and_judge_apart_and_exports(tmp_path: Path) -> None:
    log = SqliteVoteLog()
    for i in range(3):
        log.record(
            session_id="s", query_id=f"q{i}", voter="person", model_a="x", model_b="y", winner="b"
        )
        log.record(
            session_id="s", query_id=f"q{i}", voter="judge", model_a="x", model_b="y", winner="a"
        )
    votes = log.votes()
    table = arena(votes)
    assert table["people"][0].model == "y" and table["judge"][0].model == "x"
    rows = list(csv.DictReader(io.StringIO(as_csv(table))))
    assert {(r["voters"], r["model"]) for r in rows} == {
        ("people", "x"),
        ("people", "y"),
        ("judge", "x"),
        ("judge", "y"),
    }
    document = json.loads(as_json(table, votes))
    assert document["votes"] == {"people": 3, "judge": 3}
    assert document["people"][0]["model"] == "y" and document["people"][0]["wins"] == 3
