"""A small loopback web for a bridge question (issue 40): pages written here, served by
:class:`BridgeWeb`, whose search ranks them as an engine would (BM25 over the whole page).

"What government position was held by the woman who portrayed Corliss Archer in the film
Kiss and Tell?" The film's page names her (Shirley Temple); her own page, which says the
position, shares no word with the question, so a search for the question never finds it:
only a second hop, a search for her name, does. Other pages share the question's words and
crowd the first search, as a real engine's results do.
"""

from __future__ import annotations

from html import escape

from local2.retrieval import bm25_scores, terms
from local2_testkit.research_web import LoopbackWeb, Page

BRIDGE_QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the "
    "film Kiss and Tell?"
)
BRIDGE_PAGE = "shirley_temple"  # found only by the second hop
BRIDGE_FACT = "Chief of Protocol of the United States"

_PAGES: dict[str, tuple[str, list[str]]] = {
    "kiss_and_tell": (
        "Kiss and Tell (1945 film)",
        [
            "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley "
            "Temple as Corliss Archer.",
            "In the film, two teenage girls cause their respective parents much concern when "
            "they start to become interested in boys.",
        ],
    ),
    BRIDGE_PAGE: (
        "Shirley Temple",
        [
            "Shirley Temple Black was an American actress, singer and dancer who began her "
            "career at the age of three.",
            f"As an adult she served as United States Ambassador to Ghana and to "
            f"Czechoslovakia, and as {BRIDGE_FACT}.",
        ],
    ),
    "meet_corliss_archer": (
        "Meet Corliss Archer",
        [
            "Meet Corliss Archer is an American radio sitcom about a teenage girl, first "
            "broadcast in 1943.",
            "The radio character was voiced by Janet Waldo, and the film role went to others.",
        ],
    ),
}

# Pages that share the question's words (film, government, position, woman...): the crowd.
_CROWD = [
    ("government_film_board", "Government film board", "film government position board"),
    ("woman_in_film", "Women in film", "woman film portrayed roles held"),
    ("position_paper", "A position paper on film", "position film policy government"),
    ("kiss_film_review", "Kiss me once (film review)", "kiss film review tell critics"),
    ("tell_tale_film", "Tell-tale (1950 film)", "tell film portrayed held drama"),
    ("archer_club", "The archer club", "archer held position club woman"),
    ("film_festival", "The film festival", "film festival portrayed government held"),
    ("civil_service", "Civil service positions", "government position held woman service"),
]


def page_html(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{escape(title)}</title></head><body><nav>Home</nav>"
        f"<article><h1>{escape(title)}</h1>{body}</article></body></html>"
    )


def bridge_pages() -> list[Page]:
    """The bridge question's pages, its crowd included."""
    pages = []
    for name, (title, paragraphs) in _PAGES.items():
        pages.append(Page(name, title, page_html(title, paragraphs), " ".join(paragraphs)))
    for name, title, words in _CROWD:
        paragraphs = [
            f"This page is about {words}, in a few plain sentences.",
            f"It says more about the {words.split()[0]} and the {words.split()[-1]}.",
        ]
        pages.append(Page(name, title, page_html(title, paragraphs), " ".join(paragraphs)))
    return pages


class BridgeWeb(LoopbackWeb):
    """The loopback search ranked by BM25 over each page's title and text (the title twice:
    an engine weighs a title match more), not by the words a page shares with the query."""

    def rank(self, query: str) -> list[Page]:
        pages = list(self.pages.values())
        scores = bm25_scores(
            [terms(f"{p.title} {p.title} {p.text}") for p in pages],
            set(terms(query)),
            k1=1.2,
            b=0.75,
        )
        order = sorted(range(len(pages)), key=lambda i: (-scores[i], pages[i].name))
        return [pages[i] for i in order if scores[i] > 0]
