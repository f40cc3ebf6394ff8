"""bench/public: the builder turns IRCoT's HotpotQA records into HotpotQA's JSON (read by
``local2 eval``) and a BEIR folder (read by the loader), without changing the text."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from local2.evals._readers import load_set

PUBLIC = Path(__file__).resolve().parents[2] / "bench" / "public"

# Two records in IRCoT's layout (sentences joined by a space, each after the first starting
# with its own space); the text is made up for the test.
RECORDS = [
    {
        "question_id": "q1",
        "question_text": "Which river runs past the town where the Saltmere mill stands?",
        "answers_objects": [{"spans": ["the Ore"]}],
        "contexts": [
            {
                "title": "Saltmere mill",
                "paragraph_text": "A tide mill.  It stands in Orford.",
                "is_supporting": True,
            },
            {
                "title": "Orford",
                "paragraph_text": "A town in Suffolk.  The Ore runs past it.",
                "is_supporting": True,
            },
            {"title": "Butley", "paragraph_text": "A village.", "is_supporting": False},
        ],
    },
    {
        "question_id": "q2",
        "question_text": "Is Orford in Suffolk?",
        "answers_objects": [{"spans": ["yes"]}],
        "contexts": [
            {
                "title": "Orford",
                "paragraph_text": "A town in Suffolk.  The Ore runs past it.",
                "is_supporting": True,
            },
            {"title": "Ipswich", "paragraph_text": "The county town.", "is_supporting": False},
        ],
    },
]


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, PUBLIC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    source = tmp_path / "dev_subsampled.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    out = tmp_path / "data"
    monkeypatch.setattr(sys, "argv", ["build.py", "--source", str(source), "--out", str(out)])
    _module("build").main()
    return out


def test_hotpot_records_keep_the_sentences_and_read_as_an_eval_set(built: Path) -> None:
    records = json.loads((built / "hotpot_dev_2.json").read_text(encoding="utf-8"))
    assert records[0]["context"][0] == ["Saltmere mill", ["A tide mill.", " It stands in Orford."]]
    assert records[0]["answer"] == "the Ore"
    assert ["Orford", 1] in records[0]["supporting_facts"]
    qset = load_set(built / "hotpot_dev_2.json")
    assert len(qset.questions) == 2 and qset.notes == ()
    assert "The Ore runs past it." in qset.questions[0].evidence


def test_the_beir_folder_has_one_document_a_title_and_the_gold_titles(built: Path) -> None:
    corpus, queries, qrels = _module("load").load_beir(built / "beir_hotpot_2")
    titles = sorted(doc["title"] for doc in corpus.values())
    assert titles == ["Butley", "Ipswich", "Orford", "Saltmere mill"]
    assert queries["q2"] == "Is Orford in Suffolk?"
    gold = {corpus[d]["title"] for d in qrels["q1"]}
    assert gold == {"Saltmere mill", "Orford"}
    orford = next(doc for doc in corpus.values() if doc["title"] == "Orford")
    assert orford["text"] == "A town in Suffolk. The Ore runs past it."


def test_a_missing_set_names_the_command_that_builds_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"build\.py"):
        _module("load").load_beir(tmp_path / "nothing")
