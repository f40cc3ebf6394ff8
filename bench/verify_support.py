"""Benchmark (issue 52): verify holds every claim of a report to the source it cites.

Reports are written over real multi-hop questions, each question's paragraphs filed as the
ledger's sources (numbered in the set's order, every one a page read):

- HotpotQA dev (``bench/public/data/hotpot_dev_500.json``, built by ``bench/public/build.py``;
  ``--hotpot A:B``, default 101:200, the development questions of bench/README.md's split);
- 2WikiMultiHopQA dev, questions 100-199 of ``2wikimultihopqa_dev_200.jsonl`` from the
  public repository ``ninehills/deepsearch-rl`` (``--twowiki FILE``). Questions 0-99 of that
  file are held out for others: this bench refuses to read them.

Three writers, whose sentences are not planted:

- **scripted**: ``ResearchBrain`` (the test kit's research model) through the real
  ``ChatOllama`` against the test kit's Ollama-protocol server, asked with the real compose
  prompt (``compose_messages``): a heading, then each source's first sentence with its
  citation;
- **careful**: what a careful person writes from the question's supporting sentences: each
  one cited to its paragraph, a leading "He"/"She"/"It"/"They" replaced by the paragraph's
  subject, and the answer stated citing every supporting paragraph;
- **embedded**: the shipped SmolLM2-135M asked with the same compose prompt (slow: 20-30 s a
  report here; ``--embedded N`` reports per set, kept in ``--drafts FILE`` and reused).

Planted into every scripted report (and counted apart): claims a report must never keep:

- ``uncited-plain``: a claim with no name or number, citing nothing ("Critics praised it for
  its originality and careful attention to detail.");
- ``uncited-true``: a supporting sentence of the question, true, but citing nothing;
- ``cited-plain``: a claim with no name or number citing a supporting paragraph that does
  not say it;
- ``elsewhere-plain``: a real sentence (no name or number) of another question's paragraph,
  citing this question's first supporting paragraph: a source about something else;
- ``elsewhere-named``: a supporting sentence of one paragraph citing another paragraph of
  the question.

Each tree (this one, and ``--against TREE``: a checkout with its own ``.venv``, run in its
own process on its own interpreter) verifies the same drafts in the same run. Reported:
the share of the sentences the other tree keeps that this one keeps too (retention), by
writer, the planted claims each catches, what this tree removes that the other kept (by
reason, with examples, to be read by a person: false removals), and verify's time.

``--probe`` runs only the paraphrase probe instead: 26 sentences written by hand about three
pages of ``bench/extraction_corpus`` in a person's own words, each marked before any run as
saying what its cited page says or not (:data:`PROBE`); reported: what each tree keeps.

    .venv/bin/python bench/verify_support.py --twowiki FILE [--hotpot 101:200]
        [--against /tmp/base-verify] [--embedded 40] [--drafts FILE] [--lost FILE] [--kept FILE]
    .venv/bin/python bench/verify_support.py --probe --against /tmp/base-verify

Offline: it talks only to 127.0.0.1 and starts and stops its own server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HOTPOT = HERE / "public" / "data" / "hotpot_dev_500.json"
DRAFTS = HERE / "public" / "data" / "verify_drafts.json"
TWOWIKI_FIRST = 100  # questions 0-99 of the 2Wiki file are held out: never read
PLAIN_CLAIMS = [
    "It is widely regarded as one of the most important works of its kind.",
    "Critics praised it for its originality and careful attention to detail.",
    "This later became a turning point in the history of the region.",
    "Most experts agree that its influence is still felt today.",
    "It was controversial at the time and drew sharp criticism.",
    "The decision was reversed after a long public campaign.",
    "Its popularity declined sharply in the following decades.",
    "It remains largely unknown outside specialist circles.",
]
CITED = re.compile(r"\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\]")
# ``--probe``: sentences a person might write about three pages of bench/extraction_corpus
# ([1] the Kelsby bridge vote, [2] the Lune otter survey, [3] the tide mill article), in
# their own words, each marked by the writer (before any run) as what the page says (True)
# or not (False: a subtle error among the page's own words).
PROBE_PAGES = ["01_harbour_bridge", "05_river_survey", "06_tidal_mill"]
PROBE = [
    (True, "Kelsby residents chose to repair the old swing bridge instead of replacing it [1]."),
    (True, "The repair plan won 61 percent of the vote [1]."),
    (True, "Cars will not be able to cross the bridge for eighteen months during the repair [1]."),
    (True, "A temporary ferry will carry pedestrians and cyclists across the channel [1]."),
    (True, "The repair is expected to cost about half as much as a replacement [1]."),
    (
        True,
        "Opponents of a fixed bridge said it would keep the sailing club's larger boats out of"
        " the inner basin [1].",
    ),
    (True, "Work should start in March, once the winter storms are over [1]."),
    (True, "The bridge has spanned the harbour mouth since 1894 [1]."),
    (True, "Volunteers found signs of otters at 78 of the 90 sites surveyed [2]."),
    (True, "It was the highest share since the count began in 2009 [2]."),
    (
        True,
        "The volunteers look for droppings, footprints and feeding remains rather than the"
        " otters themselves [2].",
    ),
    (True, "The trust credits cleaner water and the removal of weirs for the recovery [2]."),
    (True, "Camera traps will be added at twelve sites next year [2]."),
    (True, "A tide mill is a water mill powered by the rise and fall of the tide [3]."),
    (
        True,
        "Because tide mills depend on the tide, not on rain, they could keep working in dry"
        " summers [3].",
    ),
    (True, "A mill could usually run for four to six hours on each tide [3]."),
    (True, "The miller's working day moved by about fifty minutes daily [3]."),
    (False, "The repair plan was rejected by a narrow majority [1]."),
    (False, "The ferry will run every hour, day and night [1]."),
    (False, "Engineers will replace the whole deck with a new steel one [1]."),
    (False, "Most residents wanted a new fixed bridge [1]."),
    (False, "The survey found otters at every site on the river [2]."),
    (False, "Sewage overflows have been fully solved on the lower river [2]."),
    (False, "Otters are mostly active during the day [2]."),
    (False, "Tide mills were invented in the nineteenth century [3]."),
    (False, "Tide mills were mostly converted into houses [3]."),
]
_PRONOUN = re.compile(r"^(He|She|It|They)\b")
_POSSESSIVE = re.compile(r"^(His|Her|Its|Their)\b")


# ---------------------------------------------------------------------------- the sets


def hotpot_rows(span: str) -> list[dict[str, Any]]:
    """HotpotQA questions A to B (from 1) as (id, question, answer, paragraphs, gold)."""
    if not HOTPOT.exists():
        raise SystemExit(f"no {HOTPOT}: build it as bench/public/README.md says")
    first, _, last = span.partition(":")
    records = json.loads(HOTPOT.read_text(encoding="utf-8"))[int(first) - 1 : int(last)]
    rows = []
    for r in records:
        paragraphs = [(t, " ".join(s.strip() for s in sents)) for t, sents in r["context"]]
        gold = sorted({t for t, _ in r["supporting_facts"]})
        sentences = {t: [s.strip() for s in sents] for t, sents in r["context"]}
        rows.append(
            _row("hotpot", r["_id"], r["question"], r["answer"], paragraphs, gold, sentences)
        )
    return rows


def twowiki_rows(path: Path) -> list[dict[str, Any]]:
    """2WikiMultiHopQA dev questions 100-199 of ``path`` (the ones before are never read)."""
    rows = []
    with path.open(encoding="utf-8") as lines:
        for i, line in enumerate(lines):
            if i < TWOWIKI_FIRST:
                continue  # held out: not parsed, not looked at
            if i >= TWOWIKI_FIRST + 100:
                break
            r = json.loads(line)
            meta = r["metadata"]
            titles, contents = meta["context"]["title"], meta["context"]["content"]
            paragraphs = [
                (t, " ".join(s.strip() for s in c)) for t, c in zip(titles, contents, strict=True)
            ]
            sentences = {t: [s.strip() for s in c] for t, c in zip(titles, contents, strict=True)}
            gold = sorted(set(meta["supporting_facts"]["title"]))
            # The answer as the paragraphs write it ("New York City", not "the five boroughs").
            text = " ".join(p for _, p in paragraphs)
            answers = r["golden_answers"]
            answer = next(
                (a for a in answers if re.search(rf"\b{re.escape(a)}\b", text)), answers[0]
            )
            rows.append(_row("2wiki", r["id"], r["question"], answer, paragraphs, gold, sentences))
    return rows


def _row(
    name: str,
    qid: str,
    question: str,
    answer: str,
    paragraphs: list[tuple[str, str]],
    gold: list[str],
    sentences: dict[str, list[str]],
) -> dict[str, Any]:
    return {
        "set": name,
        "id": qid,
        "question": question,
        "answer": answer,
        "paragraphs": paragraphs,
        "gold": [g for g in gold if g in sentences],
        "sentences": sentences,
    }


def ledger_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The question's paragraphs as the ledger a research run files them in."""
    from local2.research._state import Found, file_sources

    found = [
        Found(
            url="https://en.wikipedia.org/wiki/" + title.replace(" ", "_"),
            title=title,
            text=text,
            kind="page",
            at=1.0,
            step="s2",
        )
        for title, text in row["paragraphs"]
    ]
    entries, _ = file_sources([], found, max_sources=len(found))
    return [dict(e) for e in entries]


# ---------------------------------------------------------------------------- the writers


def subject(title: str) -> str:
    """A paragraph's subject as a sentence names it: "Ian Barry (director)" -> "Ian Barry"."""
    return re.sub(r"\s*\([^)]*\)$", "", title)


def resolved(sentence: str, title: str) -> str:
    """A sentence with its leading pronoun replaced by the paragraph's subject."""
    name = subject(title)
    if _POSSESSIVE.match(sentence):
        return _POSSESSIVE.sub(f"{name}'s", sentence, count=1)
    return _PRONOUN.sub(name, sentence, count=1)


def cite(sentence: str, numbers: list[int]) -> str:
    """``sentence`` with ``[n]`` (or ``[a, b]``) before its full stop."""
    mark = "[" + ", ".join(str(n) for n in numbers) + "]"
    body = sentence.rstrip()
    if body.endswith((".", "!", "?")):
        return f"{body[:-1]} {mark}{body[-1]}"
    return f"{body} {mark}."


def numbered(row: dict[str, Any]) -> dict[str, int]:
    """Each paragraph's number in the ledger (two paragraphs of one title are one source)."""
    return {source["title"]: source["n"] for source in ledger_of(row)}


def careful_draft(row: dict[str, Any]) -> str:
    """A careful writer's report from the supporting paragraphs (see the module docstring)."""
    n = numbered(row)
    lines = ["## What the sources say", ""]
    for title in row["gold"]:
        for sentence in row["sentences"][title][:3]:
            if len(sentence.split()) >= 4:
                lines.append(cite(resolved(sentence, title), [n[title]]))
    answer = row["answer"].strip().rstrip(".")
    if answer.lower() not in ("yes", "no"):
        stop = "" if answer.endswith(("!", "?")) else "."  # "Hey Pa!" ends its own sentence
        lines.append(cite(f"The answer is {answer}{stop}", [n[t] for t in row["gold"]]))
    return "\n\n".join(lines)


def planted_claims(
    row: dict[str, Any], others: list[dict[str, Any]], i: int
) -> list[dict[str, str]]:
    """The claims planted in this question's scripted report (see the module docstring)."""
    from local2.research._verify import claims

    n = numbered(row)
    gold = row["gold"] or [row["paragraphs"][0][0]]
    first, last = gold[0], gold[-1]
    planted = [
        {"kind": "uncited-plain", "sentence": PLAIN_CLAIMS[i % len(PLAIN_CLAIMS)]},
        {
            "kind": "cited-plain",
            "sentence": cite(PLAIN_CLAIMS[(i + 3) % len(PLAIN_CLAIMS)], [n[first]]),
        },
    ]
    # Not the paragraph's first sentence: the scripted report already cites that one.
    true = next((s for s in row["sentences"][last][1:] if len(s.split()) >= 5), "")
    if true:
        planted.append({"kind": "uncited-true", "sentence": resolved(true, last)})
    # A real sentence with no name or number, from a paragraph of another question.
    for other in others[i + 1 :] + others[:i]:
        picks = [
            s
            for _, text in other["paragraphs"]
            for s in other["sentences"].get(_, [])
            if len(s.split()) >= 6 and claims(s) == ([], []) and s.endswith(".")
        ]
        if picks:
            planted.append({"kind": "elsewhere-plain", "sentence": cite(picks[0], [n[first]])})
            break
    # A supporting sentence of one paragraph, cited to another paragraph of the question.
    wrong = next((t for t, _ in row["paragraphs"] if t not in gold), None)
    source = next((s for s in row["sentences"][first] if len(s.split()) >= 5), "")
    if wrong and source:
        planted.append(
            {"kind": "elsewhere-named", "sentence": cite(resolved(source, first), [n[wrong]])}
        )
    return planted


def scripted_drafts(cases: list[dict[str, Any]]) -> None:
    """Each case's scripted report, through ChatOllama against the Ollama-protocol server."""
    from langchain_ollama import ChatOllama

    from local2.config import load_settings
    from local2.models import thinking_and_answer
    from local2.research._prompts import compose_messages
    from local2_testkit.ollama_server import FakeOllama
    from local2_testkit.research_brain import ResearchBrain

    settings = load_settings().research
    for case in cases:
        brain = ResearchBrain(extra=[p["sentence"] for p in case["planted"]])
        with FakeOllama(brain) as fake:
            model = ChatOllama(model="qwen3:4b", base_url=fake.url)
            messages = compose_messages(
                case["question"], case["ledger"], settings.source_chars, settings.compose_chars
            )
            _thinking, draft = thinking_and_answer(model.invoke(messages))
            case["drafts"]["scripted"] = draft


def embedded_drafts(cases: list[dict[str, Any]], per_set: int, cache: Path) -> None:
    """SmolLM2's report for the first ``per_set`` cases of each set, kept in ``cache``."""
    kept = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    wanted = []
    for name in ("hotpot", "2wiki"):
        wanted += [c for c in cases if c["set"] == name][:per_set]
    missing = [c for c in wanted if c["key"] not in kept]
    if missing:
        from local2.config import load_settings
        from local2.models import thinking_and_answer
        from local2.models._backend import make_embedded
        from local2.research._prompts import compose_messages
        from local2.research._report import CHARS_PER_TOKEN

        settings = load_settings(overrides={"generator": {"backend": "embedded"}})
        emb = settings.embedded
        budget = min(
            settings.research.compose_chars,
            max(1000, int((emb.n_ctx - emb.max_tokens - 600) * CHARS_PER_TOKEN)),
        )
        model = make_embedded(settings)
        for k, case in enumerate(missing):
            began = time.perf_counter()
            messages = compose_messages(
                case["question"], case["ledger"], settings.research.source_chars, budget
            )
            _thinking, kept[case["key"]] = thinking_and_answer(model.invoke(messages))
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(kept, ensure_ascii=False, indent=1), encoding="utf-8")
            print(
                f"  embedded {k + 1}/{len(missing)} ({time.perf_counter() - began:.0f} s)",
                file=sys.stderr,
            )
    for case in wanted:
        case["drafts"]["embedded"] = kept[case["key"]]


# ---------------------------------------------------------------------------- one tree


def sentences_of(body: str) -> list[str]:
    """The sentences of a verified body, as verify splits them (list marks aside)."""
    from local2.research._verify import split_sentences

    mark = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+|\s*>\s*|\s*#{1,6}\s+)")
    out = []
    for line in body.splitlines():
        if line.strip():
            out += split_sentences(line[len(m.group(1)) :] if (m := mark.match(line)) else line)
    return out


def worker(cases_file: Path, out_file: Path) -> None:
    """Verify every draft of ``cases_file`` with this process's tree; write what it kept."""
    from local2.research._verify import verify

    cases = json.loads(cases_file.read_text(encoding="utf-8"))
    results: dict[str, Any] = {}
    spent = 0.0
    reports = 0
    for case in cases:
        for writer, draft in case["drafts"].items():
            began = time.perf_counter()
            checked = verify(draft, case["ledger"], case["question"])
            spent += time.perf_counter() - began
            reports += 1
            results[f"{case['key']}|{writer}"] = {
                "body": checked.body,
                "kept": sentences_of(checked.body),
                "removed": [[u.sentence, u.reason] for u in checked.unsupported],
            }
    out_file.write_text(
        json.dumps({"results": results, "seconds": spent, "reports": reports}), encoding="utf-8"
    )


def run_tree(tree: Path, cases_file: Path) -> dict[str, Any]:
    """The worker on ``tree``'s own interpreter, with its ``src`` first."""
    python = tree / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.json"
        command = [
            str(python),
            str(Path(__file__).resolve()),
            "--worker",
            str(cases_file),
            str(out),
        ]
        subprocess.run(command, check=True, env=env)
        return dict(json.loads(out.read_text(encoding="utf-8")))


# ---------------------------------------------------------------------------- the report


def compare(
    cases: list[dict[str, Any]], ours: dict[str, Any], theirs: dict[str, Any]
) -> dict[str, Any]:
    """Retention by writer, planted claims caught by each tree, and what only ours removes."""
    retained: dict[str, Counter[str]] = defaultdict(Counter)
    planted: dict[str, Counter[str]] = defaultdict(Counter)
    lost: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []  # what this tree keeps of the embedded model's reports
    for case in cases:
        plants = {p["sentence"]: p["kind"] for p in case["planted"]}
        for writer in case["drafts"]:
            key = f"{case['key']}|{writer}"
            mine, other = ours["results"][key], theirs["results"][key]
            reasons = dict((flat(s), r) for s, r in mine["removed"])
            body, before = flat(mine["body"]), flat(other["body"])
            planted_text = [flat(p) for p in plants]
            for sentence in other["kept"]:
                if any(flat(sentence) in p for p in planted_text):
                    continue  # a planted claim, or the piece of one a split left
                tally = retained[f"{case['set']} {writer}"]
                tally["kept before"] += 1
                cited = CITED.search(sentence) is not None
                tally["cited before"] += cited
                if flat(sentence) in body:
                    tally["kept now"] += 1
                    tally["cited now"] += cited
                else:
                    lost.append(
                        {
                            "set": case["set"],
                            "writer": writer,
                            "id": case["id"],
                            "sentence": sentence,
                            "reason": next(
                                (r for s, r in reasons.items() if flat(sentence) in s),
                                "(not listed)",
                            ),
                        }
                    )
            for sentence in mine["kept"]:
                if writer == "embedded":
                    kept.append({"id": case["id"], "set": case["set"], "sentence": sentence})
                if flat(sentence) not in before and sentence not in plants:
                    retained[f"{case['set']} {writer}"]["kept now, not before"] += 1
            if writer != "scripted":
                continue
            listed = [flat(s) for s, _ in mine["removed"]]
            listed_before = [flat(s) for s, _ in other["removed"]]
            for sentence, kind in plants.items():
                planted[kind]["planted"] += 1
                planted[kind]["caught before"] += any(flat(sentence) in x for x in listed_before)
                planted[kind]["caught now"] += any(flat(sentence) in x for x in listed)
    return {"retained": retained, "planted": planted, "lost": lost, "kept": kept}


def flat(text: str) -> str:
    """Text with its white space folded, to find a sentence in a report however it wraps."""
    return " ".join(text.split())


def reason_kind(reason: str) -> str:
    if reason.startswith("states something but cites no source"):
        return "uncited claim"
    if "does not say this" in reason:
        return "content words not in the cited passage"
    if "not in the cited source" in reason:
        return "name or number not in the cited source"
    return reason.split(",")[0][:60]


def print_report(
    found: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], against: Path
) -> None:
    print("\n### Retention: sentences the other tree keeps that this one keeps too\n")
    print(
        "| set, writer | kept before | kept now | retention | of them cited: retention "
        "| kept now, not before |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    total = Counter[str]()
    for name, t in [*sorted(found["retained"].items()), ("**all**", total)]:
        if name != "**all**":
            total.update(t)
        share = t["kept now"] / t["kept before"] if t["kept before"] else 1.0
        cited = t["cited now"] / t["cited before"] if t["cited before"] else 1.0
        print(
            f"| {name} | {t['kept before']} | {t['kept now']} | {share:.1%} | "
            f"{t['cited now']}/{t['cited before']} = {cited:.1%} | {t['kept now, not before']} |"
        )
    print(f"\n### Planted claims caught (this tree / {against})\n")
    print("| kind | planted | removed and listed before | removed and listed now |")
    print("|---|---:|---:|---:|")
    for kind, t in sorted(found["planted"].items()):
        print(f"| {kind} | {t['planted']} | {t['caught before']} | {t['caught now']} |")
    by_reason = Counter(f"{x['writer']}: {reason_kind(x['reason'])}" for x in found["lost"])
    print("\n### Removed now, kept before, by writer and reason\n")
    for reason, count in by_reason.most_common():
        print(f"- {reason}: {count}")
    per = [
        (tree["seconds"] / tree["reports"] * 1000 if tree["reports"] else 0.0)
        for tree in (ours, theirs)
    ]
    ratio = per[0] / per[1] if per[1] else 0.0
    print(f"\nverify per report: {per[0]:.1f} ms now, {per[1]:.1f} ms before ({ratio:.2f}x)")


def probe_cases() -> list[dict[str, Any]]:
    """One case per :data:`PROBE` sentence, over the three pages as a research run files them."""
    from local2.research._state import Found, file_sources
    from local2_testkit.research_web import load_pages

    pages = {p.name: p for p in load_pages(HERE / "extraction_corpus" / "pages")}
    found = [
        Found(
            url=f"https://pages.example/{name}",
            title=pages[name].title,
            text=pages[name].text,
            kind="page",
            at=1.0,
            step="s2",
        )
        for name in PROBE_PAGES
    ]
    ledger = [dict(e) for e in file_sources([], found, max_sources=3)[0]]
    return [
        {
            "set": "probe",
            "id": str(i),
            "key": f"probe:{i}",
            "question": "",
            "ledger": ledger,
            "planted": [],
            "drafts": {"probe": sentence},
            "supported": said,
        }
        for i, (said, sentence) in enumerate(PROBE)
    ]


def print_probe(cases: list[dict[str, Any]], ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    print("\n### Paraphrase probe: sentences marked by hand, each citing its page\n")
    print("| marked | sentences | kept before | kept now |")
    print("|---|---:|---:|---:|")
    for said in (True, False):
        mine = [c for c in cases if c["supported"] is said]
        before = sum(bool(theirs["results"][f"{c['key']}|probe"]["kept"]) for c in mine)
        now = sum(bool(ours["results"][f"{c['key']}|probe"]["kept"]) for c in mine)
        label = "says what the page says" if said else "says what the page does not"
        print(f"| {label} | {len(mine)} | {before} | {now} |")
    for c in cases:
        kept = bool(ours["results"][f"{c['key']}|probe"]["kept"])
        if kept != c["supported"]:
            removed = ours["results"][f"{c['key']}|probe"]["removed"]
            why = f" ({removed[0][1]})" if removed else ""
            print(f"- {'removed' if c['supported'] else 'kept'}: {c['drafts']['probe']}{why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--hotpot", default="101:200", help="HotpotQA questions A:B (from 1)")
    parser.add_argument("--twowiki", type=Path, help="2wikimultihopqa_dev_200.jsonl")
    parser.add_argument("--against", type=Path, help="a tree (with .venv) to compare with")
    parser.add_argument("--embedded", type=int, default=0, help="SmolLM2 reports per set")
    parser.add_argument("--drafts", type=Path, default=DRAFTS, help="SmolLM2 reports kept")
    parser.add_argument("--lost", type=Path, help="write what only this tree removes (JSON)")
    parser.add_argument("--kept", type=Path, help="write what it keeps of SmolLM2's (JSON)")
    parser.add_argument("--probe", action="store_true", help="only the paraphrase probe")
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    if args.probe:
        cases = probe_cases()
        with tempfile.TemporaryDirectory() as folder:
            cases_file = Path(folder) / "cases.json"
            cases_file.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
            theirs = run_tree(args.against or ROOT, cases_file)
            ours = run_tree(ROOT, cases_file)
        print_probe(cases, ours, theirs)
        return
    rows = hotpot_rows(args.hotpot) + (twowiki_rows(args.twowiki) if args.twowiki else [])
    cases = []
    for row in rows:
        same = [r for r in rows if r["set"] == row["set"]]
        case = {
            "set": row["set"],
            "id": row["id"],
            "key": f"{row['set']}:{row['id']}",
            "question": row["question"],
            "ledger": ledger_of(row),
            "planted": planted_claims(row, same, same.index(row)),
            "drafts": {"careful": careful_draft(row)},
        }
        cases.append(case)
    scripted_drafts(cases)
    if args.embedded:
        embedded_drafts(cases, args.embedded, args.drafts)
    against = args.against or ROOT
    with tempfile.TemporaryDirectory() as folder:
        cases_file = Path(folder) / "cases.json"
        cases_file.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
        theirs = run_tree(against, cases_file)
        ours = run_tree(ROOT, cases_file)
    found = compare(cases, ours, theirs)
    sets = Counter(c["set"] for c in cases)
    print(f"{len(cases)} questions ({dict(sets)}); this tree against {against}")
    print_report(found, ours, theirs, against)
    if args.kept:
        args.kept.write_text(json.dumps(found["kept"], ensure_ascii=False, indent=1), "utf-8")
    if args.lost:
        args.lost.write_text(
            json.dumps(found["lost"], ensure_ascii=False, indent=1), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
