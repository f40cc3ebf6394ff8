"""A report's references exported as BibTeX, RIS and CSL-JSON (issue 56), each read back by
a reader of its own (bibtexparser, rispy, json): the fields a citation needs, stable keys,
a web page's day read, a retracted work marked, an undated one said, and a title from
outside that cannot break the file."""

from __future__ import annotations

import json

import bibtexparser
import rispy

from local2.references._bibtex import to_bibtex, verbatim
from local2.references._csl import to_csl, to_csl_json
from local2.references._names import citation_keys, split_name
from local2.references._ris import to_ris
from tests.tools.references_helpers import sources


def test_keys_are_stable_and_two_alike_are_told_apart() -> None:
    keys = citation_keys(sources())
    assert keys == {
        1: "lovelace2024sparsea",
        2: "mehra2020hydroxychloroquine",
        3: "sleepndsleep",
        4: "lovelace2024sparseb",
    }
    assert citation_keys(list(reversed(sources()))) == keys  # the report's order decides


def test_names_split_for_a_style_and_a_body_of_people_kept_whole() -> None:
    assert (split_name("Ada King Lovelace").family, split_name("Ada King Lovelace").given) == (
        "Lovelace",
        "Ada King",
    )
    assert split_name("Curie, Marie").given == "Marie"
    assert split_name("Sleep Study Group").literal == "Sleep Study Group"
    assert split_name("Plato") == split_name(" Plato ") and split_name("Plato").family == "Plato"


def test_bibtex_reads_back_with_its_fields() -> None:
    library = bibtexparser.parse_string(to_bibtex(sources()))
    assert library.failed_blocks == []
    entries = {e.key: e for e in library.entries}
    assert list(entries) == [
        "lovelace2024sparsea",
        "mehra2020hydroxychloroquine",
        "sleepndsleep",
        "lovelace2024sparseb",
    ]  # the injected "@misc{evil," stayed inside its title
    paper = entries["lovelace2024sparsea"]
    assert paper.entry_type == "online"  # a preprint
    assert paper["author"] == "Lovelace, Ada and Hopper, Grace"
    assert (paper["date"], paper["year"], paper["doi"]) == (
        "2024-03-02",
        "2024",
        "10.1000/jml.2024.77",
    )
    assert (paper["eprint"], paper["eprinttype"]) == ("2403.01234", "arxiv")
    assert paper["urldate"] == "2025-03-01"
    retracted = entries["mehra2020hydroxychloroquine"]
    assert retracted.entry_type == "article" and retracted["journaltitle"] == "The Lancet"
    assert retracted["author"] == "Mehra, Mandeep R and {Sleep Study Group}"
    assert (retracted["note"], retracted["pubstate"], retracted["pmid"]) == (
        "Retracted",
        "retracted",
        "32450107",
    )
    web = entries["sleepndsleep"]
    assert web.entry_type == "online" and web["note"] == "Undated"
    assert web["title"] == r"Sleep \& memory: \{50\%\} of \$costs\} @misc\{evil,"
    assert web["url"] == "https://www.sleep.example/news?a=1&b=2"  # verbatim: as written
    assert verbatim("https://x.example/a{b}\\c") == "https://x.example/a%7Bb%7D%5Cc"


def test_ris_reads_back_with_its_tags() -> None:
    records = rispy.loads(to_ris(sources()))
    assert [r["type_of_reference"] for r in records] == ["GEN", "JOUR", "ELEC", "JOUR"]
    preprint, retracted, web, _ = records
    assert preprint["authors"] == ["Lovelace, Ada", "Hopper, Grace"]
    assert (preprint["year"], preprint["date"], preprint["doi"]) == (
        "2024",
        "2024/03/02/",
        "10.1000/jml.2024.77",
    )
    assert preprint["file_attachments1"] == "https://arxiv.org/pdf/2403.01234v2"
    assert preprint["access_date"] == "2025/03/01" and preprint["id"] == "lovelace2024sparsea"
    assert retracted["authors"] == ["Mehra, Mandeep R", "Sleep Study Group"]
    assert retracted["date"] == "2020/05//" and retracted["secondary_title"] == "The Lancet"
    assert "Retracted" in retracted["notes"] and retracted["accession_number"] == "PMID:32450107"
    assert web["title"] == "Sleep & memory: {50%} of $costs} @misc{evil,"  # one line
    assert web["notes"] == ["Undated"] and web["urls"] == ["https://www.sleep.example/news?a=1&b=2"]


def test_csl_json_carries_what_a_style_formats() -> None:
    items = json.loads(to_csl_json(sources()))
    assert items == to_csl(sources())
    preprint, retracted, web, _ = items
    assert preprint == {
        "id": "lovelace2024sparsea",
        "type": "article",
        "title": "Sparse Attention for Long Clinical Notes",
        "author": [{"family": "Lovelace", "given": "Ada"}, {"family": "Hopper", "given": "Grace"}],
        "issued": {"date-parts": [[2024, 3, 2]]},
        "container-title": "arXiv",
        "DOI": "10.1000/jml.2024.77",
        "URL": "https://arxiv.org/abs/2403.01234",
        "number": "arXiv:2403.01234",
        "accessed": {"date-parts": [[2025, 3, 1]]},
    }
    assert retracted["status"] == "retracted" and retracted["type"] == "article-journal"
    assert retracted["author"][1] == {"literal": "Sleep Study Group"}
    assert retracted["issued"] == {"date-parts": [[2020, 5]]} and retracted["PMID"] == "32450107"
    assert web["type"] == "webpage" and web["note"] == "Undated" and "issued" not in web
