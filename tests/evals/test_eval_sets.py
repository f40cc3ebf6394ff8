"""Question sets read from a path: SimpleQA's CSV, JSON lines, HotpotQA's JSON (both forms), a
folder of documents with questions; bad input names the file, the line and the fix; the
shipped demo set is whole and its gold evidence is in its own documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local2.errors import EvalFileError, InvalidInput
from local2.evals import (
    DEMO_PATH,
    Question,
    Reached,
    evidence_recall,
    format_of,
    load_set,
    select,
    set_path,
)
from local2.tools._corpus import CorpusIndex

SIMPLEQA_HEADER = "metadata,problem,answer\n"
SIMPLEQA_ROW = (
    "\"{'topic': 'Science and technology', 'answer_type': 'Person', 'urls': ['https://a']}\","
    "Who received the IEEE Frank Rosenblatt Award in 2010?,Michio Sugeno\n"
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, *rows: object) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in rows))


def problem(path: Path) -> EvalFileError:
    with pytest.raises(EvalFileError) as caught:
        load_set(path)
    return caught.value


# -- SimpleQA ---------------------------------------------------------------------------


def test_simpleqa_csv_rows_become_questions_with_their_metadata(tmp_path: Path) -> None:
    second = '"Multi\nline","quoted, with comma","Answer ""two"""\n'
    path = write(tmp_path / "simple_qa_test_set.csv", SIMPLEQA_HEADER + SIMPLEQA_ROW + second)
    qset = load_set(path)
    assert (qset.name, qset.format, qset.documents) == ("simple_qa_test_set", "simpleqa", ())
    first, other = qset.questions
    assert first == Question(
        "row-1", "Who received the IEEE Frank Rosenblatt Award in 2010?", ("Michio Sugeno",)
    )
    assert dict(first.meta) == {"topic": "Science and technology", "answer_type": "Person"}
    assert (other.id, other.question, other.answers) == (
        "row-2",
        "quoted, with comma",
        ('Answer "two"',),
    )
    assert dict(other.meta) == {"metadata": "Multi\nline"}  # not a dict literal: kept as text


@pytest.mark.parametrize(
    ("text", "message", "fix"),
    [
        (
            "topic,question\nx,y\n",
            "line 1: the header ['topic', 'question'] has no 'problem' and 'answer' columns",
            "metadata,problem,answer",
        ),
        (
            SIMPLEQA_HEADER + SIMPLEQA_ROW + "{},,an answer\n",
            "line 3: the problem is empty",
            "needs a problem and its answer",
        ),
        (
            SIMPLEQA_HEADER + "{},A question?,  \n",
            "line 2: the answer is empty",
            "needs a problem and its answer",
        ),
        (SIMPLEQA_HEADER, "no questions", "add at least one question"),
    ],
)
def test_a_bad_simpleqa_csv_names_the_line_and_the_fix(
    tmp_path: Path, text: str, message: str, fix: str
) -> None:
    path = write(tmp_path / "s.csv", text)
    err = problem(path)
    assert str(err) == f"{path}: {message}" and fix in err.fix


def test_a_question_file_in_another_encoding_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes((SIMPLEQA_HEADER + "{},Où est né Zoë ?,Genève\n").encode("latin-1"))
    assert "not UTF-8 text" in str(problem(path))


# -- JSON lines ---------------------------------------------------------------------------


def test_json_lines_questions_with_evidence_and_documents(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "mine.jsonl",
        {
            "id": "q1",
            "question": " Who? ",
            "answers": ["Ada", " Ada Lovelace "],
            "evidence": ["Ada wrote the first program."],
            "documents": [
                "Ada wrote the first program.\nIt ran on paper.",
                {"id": "engine", "title": "The Engine", "text": "Babbage's engine."},
            ],
            "meta": {"type": "bridge", "hops": 2, "note": None},
        },
        {
            "id": 7,
            "question": "Where?",
            "answers": ["London"],
            "documents": [{"id": "engine", "text": "Babbage's engine."}],
        },
    )
    qset = load_set(path)
    q1, q7 = qset.questions
    assert (q1.id, q1.question, q1.answers) == ("q1", "Who?", ("Ada", "Ada Lovelace"))
    assert q1.evidence == ("Ada wrote the first program.",)
    assert dict(q1.meta) == {"type": "bridge", "hops": "2"}
    assert q7.id == "7" and q7.evidence == ()
    assert [(d.id, d.title) for d in qset.documents] == [
        ("q1/1", "Ada wrote the first program."),
        ("engine", "The Engine"),
    ]


@pytest.mark.parametrize(
    ("rows", "message", "fix"),
    [
        (
            [{"id": "a", "question": "Q", "answer": "x"}],
            "line 1: 'answer' where 'answers' (a list) belongs",
            '"answers": ["..."]',
        ),
        (
            [{"id": "a", "question": "Q", "answers": []}],
            "line 1: answers: List should have at least 1 item after validation, not 0",
            '"answers": ["..."]',
        ),
        (
            [{"id": "a", "question": "  ", "answers": ["x"]}],
            "line 1: question: Value error, is empty",
            '"question"',
        ),
        ([{"question": "Q", "answers": ["x"]}], "line 1: no 'id'", '"id"'),
        (
            [{"id": "a", "question": "Q", "answers": ["x", " "]}],
            "line 1: answers: Value error, has an empty entry",
            "answers",
        ),
        (
            [{"id": "a", "question": "Q", "answers": ["x"], "gold": "x"}],
            "line 1: unknown key 'gold'",
            '"meta"',
        ),
        (
            [
                {"id": "a", "question": "Q", "answers": ["x"]},
                {"id": "a", "question": "R", "answers": ["y"]},
            ],
            "question id 'a' is used twice",
            "its own id",
        ),
        (
            [
                {
                    "id": "a",
                    "question": "Q",
                    "answers": ["x"],
                    "documents": [{"id": "d", "text": "one"}],
                },
                {
                    "id": "b",
                    "question": "R",
                    "answers": ["y"],
                    "documents": [{"id": "d", "text": "two"}],
                },
            ],
            "line 2: document 'd' has another text than on line 1",
            "different ids",
        ),
    ],
)
def test_a_bad_json_lines_set_names_the_line_and_the_fix(
    tmp_path: Path, rows: list[object], message: str, fix: str
) -> None:
    path = jsonl(tmp_path / "bad.jsonl", *rows)
    err = problem(path)
    assert str(err) == f"{path}: {message}" and fix in err.fix


def test_a_line_that_is_not_json_is_named_with_its_column(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl", '{"id": "a", "question": "Q", "answers": ["x"]}\n\n{"id": "b",\n'
    )
    err = problem(path)
    assert str(err).startswith(f"{path}: line 3, column 12: not JSON")
    assert "a value cannot span lines" in err.fix


# -- HotpotQA -----------------------------------------------------------------------------

HOTPOT = {
    "_id": "5a8b57f25542995d1e6f1371",
    "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
    "answer": "yes",
    "type": "comparison",
    "level": "hard",
    "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0], ["Ed Wood", 9]],
    "context": [
        ["Ed Wood", ["Edward Davis Wood Jr. was an American filmmaker.", " He made cult films."]],
        ["Scott Derrickson", ["Scott Derrickson is an American director.", " He lives in LA."]],
        ["Doctor Strange", ["Doctor Strange is a 2016 film."]],
    ],
}


def test_hotpotqa_context_is_the_corpus_and_supporting_facts_the_gold_evidence(
    tmp_path: Path,
) -> None:
    second = {
        **HOTPOT,
        "_id": "x2",
        "supporting_facts": [["Doctor Strange", 0]],
        "context": [HOTPOT["context"][2]],
    }
    path = write(tmp_path / "hotpot_dev_distractor_v1.json", json.dumps([HOTPOT, second]))
    qset = load_set(path)
    first = qset.questions[0]
    assert (first.id, first.answers, dict(first.meta)) == (
        "5a8b57f25542995d1e6f1371",
        ("yes",),
        {"type": "comparison", "level": "hard"},
    )
    assert first.evidence == (
        "Scott Derrickson is an American director.",
        "Edward Davis Wood Jr. was an American filmmaker.",
    )
    assert [(d.id, d.text) for d in qset.documents] == [
        ("Ed Wood", "Edward Davis Wood Jr. was an American filmmaker. He made cult films."),
        ("Scott Derrickson", "Scott Derrickson is an American director. He lives in LA."),
        ("Doctor Strange", "Doctor Strange is a 2016 film."),
    ]  # a paragraph shared by two questions is one document
    assert qset.notes == (
        "record 1 (5a8b57f25542995d1e6f1371): supporting fact ['Ed Wood', 9] is not in its "
        "context; left out of the gold evidence",
    )


def test_hotpotqa_in_the_dataset_viewer_form_reads_the_same(tmp_path: Path) -> None:
    viewer = {
        "id": HOTPOT["_id"],
        "question": HOTPOT["question"],
        "answer": "yes",
        "supporting_facts": {"title": ["Scott Derrickson", "Ed Wood"], "sent_id": [0, 0]},
        "context": {
            "title": [c[0] for c in HOTPOT["context"]],
            "sentences": [c[1] for c in HOTPOT["context"]],
        },
    }
    original = load_set(write(tmp_path / "a.json", json.dumps([HOTPOT])))
    converted = load_set(write(tmp_path / "b.json", json.dumps([viewer])))
    assert converted.questions[0].evidence == original.questions[0].evidence
    assert converted.documents == original.documents


@pytest.mark.parametrize(
    ("data", "message", "fix"),
    [
        ({"data": []}, "the top level is not a list of records", "hotpot_dev_distractor_v1.json"),
        (
            [{k: v for k, v in HOTPOT.items() if k != "answer"}],
            "record 1: no 'answer'",
            "test file of HotpotQA carries no answers",
        ),
        (
            [{**HOTPOT, "context": "text"}],
            "record 1: is neither [[title, sentences], ...] nor a dict of two lists",
            "_id, question, answer",
        ),
    ],
)
def test_a_bad_hotpotqa_file_names_the_record_and_the_fix(
    tmp_path: Path, data: object, message: str, fix: str
) -> None:
    path = write(tmp_path / "h.json", json.dumps(data))
    err = problem(path)
    assert str(err) == f"{path}: {message}" and fix in err.fix


def test_hotpotqa_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "h.json", '[\n{"_id": 1,\n]\n')
    assert str(problem(path)).startswith(f"{path}: line 3: not JSON")


# -- a folder -------------------------------------------------------------------------------


def test_a_folder_set_is_its_questions_file_and_its_documents(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder / "docs" / "mill.md", "# The Mill\n\nThe mill was built in 1781.\n")
    write(folder / "bridge.txt", "The bridge has seven arches.\n")
    jsonl(
        folder / "questions.jsonl",
        {
            "id": "m",
            "question": "When was the mill built?",
            "answers": ["1781"],
            "evidence": ["The mill was built in 1781."],
        },
    )
    qset = load_set(folder)
    assert (qset.name, qset.format) == ("notes", "folder")
    assert [d.id for d in qset.documents] == ["bridge", "docs/mill"]  # questions.jsonl is not one
    assert [q.id for q in qset.questions] == ["m"]


def test_a_folder_may_hold_a_simpleqa_csv_instead(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    write(folder / "questions.csv", "question,answer\nWhen?,1781\n")
    write(folder / "a.md", "text")
    qset = load_set(folder)
    assert qset.questions[0].answers == ("1781",) and len(qset.documents) == 1


def test_a_folder_without_one_questions_file_says_what_to_add(tmp_path: Path) -> None:
    write(tmp_path / "f" / "a.md", "text")
    assert "no questions.jsonl or questions.csv" in str(problem(tmp_path / "f"))
    write(tmp_path / "f" / "questions.jsonl", "")
    write(tmp_path / "f" / "questions.csv", "question,answer\n")
    assert "keep only one of them" in problem(tmp_path / "f").fix


def test_formats_come_from_the_path(tmp_path: Path) -> None:
    assert format_of(write(tmp_path / "a.CSV", "")) == "simpleqa"
    assert format_of(write(tmp_path / "a.jsonl", "")) == "jsonl"
    assert format_of(write(tmp_path / "a.json", "")) == "hotpotqa"
    assert format_of(tmp_path) == "folder"
    with pytest.raises(EvalFileError, match="not a set format LoCAL2 reads"):
        format_of(write(tmp_path / "a.parquet", ""))
    with pytest.raises(EvalFileError, match="no such file or folder"):
        format_of(tmp_path / "missing.csv")


def test_the_fingerprint_changes_with_the_set_and_only_then(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    write(folder / "questions.csv", "question,answer\nWhen?,1781\n")
    write(folder / "a.md", "text")
    first = load_set(folder).fingerprint
    assert load_set(folder).fingerprint == first
    write(folder / "a.md", "other text")
    assert load_set(folder).fingerprint != first


# -- choosing questions --------------------------------------------------------------------

QUESTIONS = [Question(f"q{i}", f"Q{i}?", ("a",)) for i in range(20)]


def test_a_sample_is_the_same_for_the_same_seed_and_keeps_set_order() -> None:
    first = select(QUESTIONS, sample=5, seed=3)
    assert first == select(QUESTIONS, sample=5, seed=3)
    assert first != select(QUESTIONS, sample=5, seed=4)
    assert len(first) == 5 and first == sorted(first, key=QUESTIONS.index)
    assert select(QUESTIONS, limit=3) == QUESTIONS[:3]
    assert select(QUESTIONS, sample=5, seed=3, limit=2) == first[:2]
    assert select(QUESTIONS, sample=50, seed=1) == QUESTIONS
    with pytest.raises(InvalidInput, match="at least one"):
        select(QUESTIONS, limit=0)


# -- the demo set ---------------------------------------------------------------------------


def test_the_demo_set_is_thirty_questions_over_its_own_corpus() -> None:
    qset = load_set(set_path("demo"))
    assert qset.path == DEMO_PATH and qset.format == "folder"
    assert len(qset.questions) == 30 and len(qset.documents) == 32
    kinds = [q.meta["type"] for q in qset.questions]
    assert kinds.count("bridge") == 8 and kinds.count("comparison") == 3
    assert all(q.evidence for q in qset.questions)


def test_every_demo_evidence_sentence_is_in_the_documents_it_names() -> None:
    qset = load_set(set_path("demo"))
    docs = {d.id.removeprefix("docs/"): d for d in qset.documents}
    for q in qset.questions:
        named = [Reached(n, docs[n].text) for n in q.meta["documents"].split()]
        report = evidence_recall(q.evidence, named)
        assert report["found"] == report["total"], (q.id, report["items"])
        multi = q.meta["type"] != "single"
        assert len(named) >= 2 if multi else len(named) == 1, q.id


def test_bm25_finds_every_demo_questions_documents_in_its_top_five() -> None:
    """The demo is answerable from its corpus: for each question, every document it needs is
    among the five a search for the question itself returns (measured: 18 of 30 at the top,
    29 of 30 within three)."""
    qset = load_set(set_path("demo"))
    index = CorpusIndex("demo", qset.documents)
    for q in qset.questions:
        found = {h.document.id for h in index.search(q.question, 5)}
        assert {f"docs/{n}" for n in q.meta["documents"].split()} <= found, q.id
