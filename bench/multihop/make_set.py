"""A multi-hop question set in HotpotQA's JSON format, made up and seeded (issue 40).

Every entity is fictional, so no model knows an answer and no download is needed. Each
question has 10 paragraphs: its 2 gold ones and 8 distractors that share the question's
words, as HotpotQA's distractor setting does:

- **bridge** (60): "In which town was the actor who played Mara Quell in The Silent
  Harbour born?" The first paragraph (the film) names the actor; the second (the actor's
  own page, titled by the name) gives the answer and shares none of the question's names,
  so searching the question ranks it low or not at all. Three kinds: film, actor,
  birthplace; novel, author, university; building, architect, year of birth.
- **comparison** (40): "Which was founded earlier, the X or the Y?" and "Which is longer,
  the River X or the River Y?": both paragraphs are named in the question, among
  distractors named almost alike (another club of the same town, a village of the river's
  name).

Gold sentences are never a paragraph's first (a search snippet shows the start of a page),
so the evidence mostly reaches the model only if the page is read.

    .venv/bin/python bench/multihop/make_set.py [--seed 40] [--out bench/multihop/multihop.json]

The same seed gives the same file, byte for byte (``tests/house/test_multihop_set.py`` checks it).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "multihop.json"
SEED = 40


def listed(text: str, sep: str | None = None) -> list[str]:
    """Words (or ``sep``-separated items) of ``text``: long lists stay readable."""
    return text.split(sep)


FIRST = listed(
    "Mara Tobias Ilse Corin Petra Anselm Livia Oskar Greta Emrys Sabine Davor Nadia Felix "
    "Ysolde Bram Helka Ruben Tamsin Lorcan Vera Jasper Odile Milos Agnes Cyril Rhea Stellan "
    "Ines Tiberius Wenna Aurel Elodie Konrad Maren Silas Talia Edvin Rosalind Piet"
)
SYLLABLES = listed(
    "val mor quen bra dell thor ash ven kel lin dar osk rew fen gar hol ist jun lom nar pel "
    "rud sor tav ul wick yar zen bel cor mab tre vil hask orn plen"
)
SURNAME_ENDS = ["", "e", "er", "ton", "by", "holt", "ard", "wyn", "ley", "en"]
TOWN_ENDS = ["ford", "mere", "wick", "stead", "haven", "moor", "bury", "dale", "stow", "combe"]
ADJECTIVES = listed(
    "Silent Crimson Hollow Distant Broken Golden Quiet Winter Northern Pale Scarlet Gentle "
    "Hidden Iron Velvet Burning Amber Narrow Lonely Frozen Wandering Last Bitter Silver"
)
NOUNS = listed(
    "Harbour Orchard Lantern Meadow Tide Garden Compass Bridge Mirror Shore Kingdom Violin "
    "Summer Archive Signal Cathedral Ferry Island Letter Furnace Promise Season Parade"
)
NATIONS = listed("Welsh Danish Dutch Austrian Belgian Norwegian Scottish Swiss Irish Flemish")
REGIONS = listed("Ostmark Vellandry Corrow Harth Lisswold Quarrendon Brevik Tallowmere")
GENRES = listed("drama comedy thriller romance war mystery")
JOBS = listed("ferry pilot,schoolteacher,clockmaker,lighthouse keeper,fisherman,surveyor", ",")
STYLES = listed(
    "Gothic Revival,Neoclassical,Art Deco,Italianate,Baroque Revival,Arts and Crafts", ","
)
BUILDINGS = listed("Corn Exchange,Assembly Rooms,Town Hall,Custom House,Market Hall,Guildhall", ",")
CLUBS = listed(
    "Rowing Club,Chess Society,Choral Society,Cricket Club,Photographic Society,"
    "Literary Institute,Brass Band,Sailing Club",
    ",",
)
FISH = listed("trout,salmon,grayling,eels,otters,kingfishers", ",")


@dataclass
class Names:
    """Fictional names, each used once in the whole set (titles must be unique)."""

    rng: random.Random
    used: set[str] = field(default_factory=set)

    def _fresh(self, make: Callable[[], str]) -> str:
        for tries in range(10_000):
            name = make() if tries < 50 else f"{make()} {self.word()}"
            if name not in self.used:
                self.used.add(name)
                return name
        raise RuntimeError("no fresh name left")

    def word(self) -> str:
        r = self.rng
        return (r.choice(SYLLABLES) + r.choice(SYLLABLES) + r.choice(SURNAME_ENDS)).capitalize()

    def person(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(FIRST)} {self.word()}")

    def town(self) -> str:
        r = self.rng
        return self._fresh(
            lambda: (r.choice(SYLLABLES) + r.choice(SYLLABLES) + r.choice(TOWN_ENDS)).capitalize()
        )

    def river(self) -> str:
        return self._fresh(lambda: self.word())

    def work(self, adjective: str | None = None, noun: str | None = None) -> str:
        r = self.rng
        return self._fresh(
            lambda: f"The {adjective or r.choice(ADJECTIVES)} {noun or r.choice(NOUNS)}"
        )


Paragraph = tuple[str, list[str]]


def sentences(*texts: str) -> list[str]:
    """HotpotQA's sentence list: every sentence after the first keeps its leading space."""
    return [t if i == 0 else f" {t}" for i, t in enumerate(texts)]


def plural(name: str) -> str:
    return name[:-1] + "ies" if name.endswith("y") else name + "s"


def pronoun(rng: random.Random) -> tuple[str, str]:
    return rng.choice([("He", "his"), ("She", "her")])


@dataclass
class Made:
    question: str
    answer: str
    kind: str
    gold: list[tuple[Paragraph, int]]  # each gold paragraph and its supporting sentence
    distractors: list[Paragraph]


def person_page(
    rng: random.Random, name: str, job: str, fact: str, he_his: tuple[str, str] | None = None
) -> Paragraph:
    """A person's page, ``fact`` (a sentence about them, ``{he}``/``{his}`` filled in) third."""
    he, his = he_his or pronoun(rng)
    nation = rng.choice(NATIONS)
    a = "an" if nation[0] in "AEIOU" else "a"
    return name, sentences(
        f"{name} ({rng.randint(1880, 1950)}–{rng.randint(1955, 2010)}) was {a} {nation} {job}.",
        f"{he} spent {his} early career touring with a small company in {rng.choice(REGIONS)}.",
        fact.replace("{he}", he).replace("{his}", his),
        f"Later in life {he.lower()} taught at a school in {rng.choice(REGIONS)}.",
    )


def film_bridge(rng: random.Random, names: Names) -> Made:
    film = names.work()
    adjective, noun = film.split()[1:3]
    character, actor, director, other = (names.person() for _ in range(4))
    town, set_town, other_town, director_town = (names.town() for _ in range(4))
    he_his = pronoun(rng)
    his = he_his[1]
    year = rng.randint(1934, 1975)
    hop1 = (
        film,
        sentences(
            f"{film} is a {year} {rng.choice(GENRES)} film directed by {director}.",
            f"It was shot on location in {set_town} over {rng.randint(5, 14)} weeks.",
            f"The story follows {character}, a {rng.choice(JOBS)} who comes home after "
            f"{rng.randint(3, 20)} years away.",
            f"{character} was played by {actor}, in {his} first leading role.",
            f"The film was restored in {rng.randint(1990, 2020)}.",
        ),
    )
    hop2 = person_page(rng, actor, "stage and screen actor", f"{{he}} was born in {town}.", he_his)
    novel = f"{film} (novel)"
    names.used.add(novel)
    serial = f"{character} (radio serial)"
    names.used.add(serial)
    distractors = [
        (
            novel,
            sentences(
                f"{film} is a {year - rng.randint(3, 30)} novel by {names.person()}.",
                f"It is set in {set_town} and was later adapted as a film of the same name.",
                "The novel was reissued with a new preface in the 1980s.",
            ),
        ),
        (
            serial,
            sentences(
                f"{character} is a radio serial broadcast from {year + 2} to {year + 6}.",
                f"The title character, {character}, was played by {other}.",
                f"{other} was born in {other_town}.",
            ),
        ),
        person_page(rng, director, "film director", f"{{he}} was born in {director_town}."),
        person_page(rng, other, "radio actor", f"{{he}} was born in {other_town}."),
        (
            set_town,
            sentences(
                f"{set_town} is a market town in {rng.choice(REGIONS)}.",
                f"Several films were shot in the town, among them {film}.",
                f"Its railway station opened in {rng.randint(1840, 1900)}.",
            ),
        ),
        film_page(rng, names.work(adjective), names),
        film_page(rng, names.work(None, noun), names),
        person_page(
            rng,
            names.person(),
            "stage actor",
            f"{{he}} was born in {names.town()}, a harbour town.",
        ),
    ]
    question = f"In which town was the actor who played {character} in {film} born?"
    return Made(question, town, "bridge", [(hop1, 3), (hop2, 2)], distractors)


def film_page(rng: random.Random, title: str, names: Names) -> Paragraph:
    """Another film: a distractor sharing words with the question's."""
    lead, role = names.person(), names.person()
    return title, sentences(
        f"{title} is a {rng.randint(1930, 1990)} {rng.choice(GENRES)} film.",
        f"{role} was played by {lead}.",
        f"The film was shot in {names.town()}.",
    )


def novel_bridge(rng: random.Random, names: Names) -> Made:
    novel = names.work()
    adjective = novel.split()[1]
    author, hero, rival = (names.person() for _ in range(3))
    university, setting = names.town(), names.town()
    publisher = f"{names.word()} & {names.word()}"
    prize = f"{names.word()} Prize"
    _, his = pronoun(rng)
    hop1 = (
        novel,
        sentences(
            f"{novel} is a {rng.randint(1920, 1999)} novel set in {setting}.",
            f"It tells of {hero}, a {rng.choice(JOBS)}, and {his} rivalry with {rival}.",
            f"The book was written by {author} and published by {publisher}.",
            f"It was shortlisted for the {prize}.",
        ),
    )
    hop2 = person_page(
        rng,
        author,
        "novelist and essayist",
        f"{{he}} studied history at the University of {university}.",
    )
    film = f"{novel} (film)"
    names.used.update([film, publisher, prize])
    other_author = names.person()
    distractors = [
        (
            film,
            sentences(
                f"{novel} is a film adapted from the novel of the same name.",
                f"{hero} is played by {names.person()}.",
                f"The screenplay was written by {other_author}.",
            ),
        ),
        (
            publisher,
            sentences(
                f"{publisher} is a publishing house founded in {setting}.",
                f"Its authors have included {other_author} and {names.person()}.",
                f"It published {novel} in hardback.",
            ),
        ),
        (
            prize,
            sentences(
                f"The {prize} is a literary award for novels written in {rng.choice(REGIONS)}.",
                f"Books shortlisted for it include {novel} and {names.work(adjective)}.",
                f"It was first awarded in {rng.randint(1920, 1960)}.",
            ),
        ),
        person_page(
            rng,
            other_author,
            "screenwriter and novelist",
            f"{{he}} studied law at the University of {names.town()}.",
        ),
        person_page(rng, hero, "fictional character in a stage play", "{he} is a ferry pilot."),
        (
            names.work(adjective) + " (novel)",
            sentences(
                f"This novel by {names.person()} is set in {setting}.",
                "It was written while its author studied at the university there.",
                f"It won the {prize}.",
            ),
        ),
        (
            f"University of {names.town()}",
            sentences(
                "This university was founded as a college of mines.",
                f"Its alumni include the novelist {names.person()}.",
                "It has a noted collection of novels and letters.",
            ),
        ),
        (
            setting,
            sentences(
                f"{setting} is a port town in {rng.choice(REGIONS)}.",
                f"It is the setting of the novel {novel}.",
                f"The town has a small university college founded in {rng.randint(1950, 1990)}.",
            ),
        ),
    ]
    question = f"Which university did the author of {novel} attend?"
    return Made(
        question, f"University of {university}", "bridge", [(hop1, 2), (hop2, 2)], distractors
    )


def building_bridge(rng: random.Random, names: Names) -> Made:
    town = names.town()
    kind = rng.choice(BUILDINGS)
    building = f"{town} {kind}"
    names.used.add(building)
    architect, rival = names.person(), names.person()
    style = rng.choice(STYLES)
    born = rng.randint(1790, 1880)
    y1 = born + rng.randint(30, 50)
    hop1 = (
        building,
        sentences(
            f"The {building} is a {style} building in {town}.",
            f"It was built between {y1} and {y1 + rng.randint(2, 6)} for the town's council.",
            f"It was designed by the architect {architect}.",
            f"The building was listed in {rng.randint(1950, 1990)}.",
        ),
    )
    hop2 = person_page(rng, architect, "architect", f"{{he}} was born in {born} in {names.town()}.")
    other_kind = rng.choice([b for b in BUILDINGS if b != kind])
    distractors = [
        (
            town,
            sentences(
                f"{town} is a town in {rng.choice(REGIONS)}.",
                f"Its landmarks include the {building} and the parish church.",
                f"The town's population was {rng.randint(4000, 40000)} in 2011.",
            ),
        ),
        (
            f"{town} {other_kind}",
            sentences(
                f"The {town} {other_kind} is a {style} building in {town}.",
                f"It was designed by the architect {rival} and opened in {y1 + 10}.",
                f"{rival} was born in {born + 5}.",
            ),
        ),
        person_page(rng, rival, "architect", f"{{he}} was born in {born + 5} in {town}."),
        (
            f"{style} architecture in {town}",
            sentences(
                f"The {style} style reached {town} in the {y1 // 10 * 10}s.",
                f"The architect of the {building} worked in it, as did {rival}.",
                "Few of the town's buildings of that style survive.",
            ),
        ),
        (
            f"{names.town()} {kind}",
            sentences(
                f"This {kind.lower()} is a {style} building designed by the architect "
                f"{names.person()}.",
                f"It was built in {y1 - 12}.",
                "Its architect was born in the town.",
            ),
        ),
        person_page(
            rng, names.person(), "architect", f"{{he}} was born in {born - 3} in {names.town()}."
        ),
        (
            f"{building} fire",
            sentences(
                f"The {building} fire broke out in {y1 + 60}.",
                "The council chamber was destroyed and rebuilt to the original design.",
                f"The restoration was led by {names.person()}.",
            ),
        ),
        person_page(rng, names.person(), "builder", f"{{he}} built the {town} {other_kind}."),
    ]
    question = f"In what year was the architect of the {building} born?"
    return Made(question, str(born), "bridge", [(hop1, 2), (hop2, 2)], distractors)


def club_comparison(rng: random.Random, names: Names) -> Made:
    town_a, town_b = names.town(), names.town()
    kind_a, kind_b = rng.sample(CLUBS, 2)
    club_a, club_b = f"{town_a} {kind_a}", f"{town_b} {kind_b}"
    year_a, year_b = rng.sample(range(1820, 1960), 2)

    def club(name: str, town: str, year: str | int) -> Paragraph:
        return name, sentences(
            f"The {name} is a society based in {town}, {rng.choice(REGIONS)}.",
            f"Its members meet weekly at the {names.word()} Hall.",
            f"It was founded in {year} by {names.person()}.",
            f"It has about {rng.randint(40, 400)} members today.",
        )

    hop_a, hop_b = club(club_a, town_a, year_a), club(club_b, town_b, year_b)
    cross_a, cross_b = f"{town_a} {kind_b}", f"{town_b} {kind_a}"
    names.used.update([club_a, club_b, cross_a, cross_b])
    distractors = [
        club(cross_a, town_a, rng.randint(1820, 1960)),
        club(cross_b, town_b, rng.randint(1820, 1960)),
        (
            town_a,
            sentences(
                f"{town_a} is a town in {rng.choice(REGIONS)}.",
                f"It is home to the {club_a}, among other societies.",
                f"Its first school was founded in {rng.randint(1800, 1900)}.",
            ),
        ),
        (
            town_b,
            sentences(
                f"{town_b} is a village in {rng.choice(REGIONS)}.",
                f"The {club_b} meets in its hall.",
                f"Its church was founded in {rng.randint(1100, 1500)}.",
            ),
        ),
        (
            f"{plural(kind_a)} of {rng.choice(REGIONS)}",
            sentences(
                f"Many towns have a {kind_a.lower()}.",
                f"The oldest, the {names.town()} {kind_a}, was founded in "
                f"{rng.randint(1780, 1819)}.",
                f"The {club_a} is among the largest.",
            ),
        ),
        (
            f"{plural(kind_b)} of {rng.choice(REGIONS)}",
            sentences(
                f"A {kind_b.lower()} is a society of amateurs.",
                f"The {names.town()} {kind_b} was founded earlier than most.",
                f"The {club_b} joined the regional league in {rng.randint(1960, 2000)}.",
            ),
        ),
        person_page(rng, names.person(), "founder of clubs", f"{{he}} founded a club in {town_a}."),
        person_page(rng, names.person(), "choir master", f"{{he}} led a society in {town_b}."),
    ]
    question = f"Which was founded earlier, the {club_a} or the {club_b}?"
    answer = club_a if year_a < year_b else club_b
    return Made(question, answer, "comparison", [(hop_a, 2), (hop_b, 2)], distractors)


def river_comparison(rng: random.Random, names: Names) -> Made:
    name_a, name_b = names.river(), names.river()
    river_a, river_b = f"River {name_a}", f"River {name_b}"
    length_a, length_b = rng.sample(range(20, 400), 2)

    def river(name: str, title: str, length: int) -> Paragraph:
        return title, sentences(
            f"The {title} is a river in {rng.choice(REGIONS)}.",
            f"It rises in the {names.word()} Hills and flows through {names.town()}.",
            f"Its course is {length} kilometres long.",
            f"The river is known for its {rng.choice(FISH)}.",
        )

    hop_a, hop_b = river(name_a, river_a, length_a), river(name_b, river_b, length_b)
    extra = [f"{name_a} (village)", f"{name_b} Bridge", f"{name_a} Valley Railway", f"{name_b}"]
    names.used.update([river_a, river_b, *extra])
    distractors = [
        (
            extra[0],
            sentences(
                f"{name_a} is a village named after the {river_a}.",
                f"The village lies {rng.randint(2, 30)} kilometres from the river's mouth.",
                "It has a long mill race.",
            ),
        ),
        (
            extra[1],
            sentences(
                f"The {name_b} Bridge crosses the {river_b} at {names.town()}.",
                f"It is {rng.randint(40, 300)} metres long.",
                f"It was opened in {rng.randint(1850, 1990)}.",
            ),
        ),
        (
            extra[2],
            sentences(
                f"The {name_a} Valley Railway ran beside the {river_a}.",
                f"Its line was {rng.randint(10, 80)} kilometres long.",
                f"It closed in {rng.randint(1950, 1975)}.",
            ),
        ),
        (
            extra[3],
            sentences(
                f"{name_b} is a family name from {rng.choice(REGIONS)}.",
                f"The {river_b} is named after a mill owner of the name.",
                "The name means 'long water'.",
            ),
        ),
        river(names.river(), f"River {names.river()}", rng.randint(20, 400)),
        (
            f"Rivers of {rng.choice(REGIONS)}",
            sentences(
                "This region is drained by many short rivers.",
                f"The longest is {rng.randint(300, 500)} kilometres long.",
                f"The {river_a} and the {river_b} both flow into the same sea.",
            ),
        ),
        (
            f"{river_a} flood",
            sentences(
                f"The {river_a} flooded in {rng.randint(1900, 2000)}.",
                f"Water rose {rng.randint(2, 6)} metres above its usual level.",
                "Bridges along the river were closed.",
            ),
        ),
        person_page(rng, names.person(), "naturalist", f"{{he}} surveyed the {river_b}."),
    ]
    question = f"Which is longer, the {river_a} or the {river_b}?"
    answer = river_a if length_a > length_b else river_b
    return Made(question, answer, "comparison", [(hop_a, 2), (hop_b, 2)], distractors)


MAKERS: list[tuple[Callable[[random.Random, Names], Made], int]] = [
    (film_bridge, 20),
    (novel_bridge, 20),
    (building_bridge, 20),
    (club_comparison, 20),
    (river_comparison, 20),
]


def record(n: int, made: Made, rng: random.Random, titles: set[str]) -> dict[str, object]:
    """One HotpotQA record: its paragraphs in a seeded order; a distractor whose title an
    earlier paragraph of the set has already taken gets a number after it."""
    context: list[list[object]] = [list(p) for p, _ in made.gold]
    for title, text in made.distractors:
        unique, k = title, 2
        while unique in titles:
            unique, k = f"{title} ({k})", k + 1
        context.append([unique, text])
    titles.update(str(p[0]) for p in context)
    rng.shuffle(context)
    return {
        "_id": f"mh{n:03d}",
        "question": made.question,
        "answer": made.answer,
        "supporting_facts": [[p[0], i] for p, i in made.gold],
        "context": context,
        "type": made.kind,
        "level": "hard",
    }


def build(seed: int = SEED) -> list[dict[str, object]]:
    """The whole set, families interleaved (so ``--limit`` takes some of each)."""
    rng = random.Random(seed)
    names = Names(rng)
    queue = [maker for maker, count in MAKERS for _ in range(count)]
    order = [queue[i + j * 20] for i in range(20) for j in range(len(MAKERS))]
    titles: set[str] = set()
    return [record(n, maker(rng, names), rng, titles) for n, maker in enumerate(order, 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = build(args.seed)
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    paragraphs = sum(len(r["context"]) for r in data)  # type: ignore[arg-type]
    print(f"{len(data)} questions, {paragraphs} paragraphs: {args.out}")


if __name__ == "__main__":
    main()
