"""Build the extraction corpus: one realistic page per article, plus its gold text.

Run ``python bench/extraction_corpus/build_corpus.py`` to regenerate ``pages/*.html`` and
``gold/*.txt`` from ``articles.py``. Each layout wraps the article body in a different kind
of site furniture (navigation, cookie banners, comments, related links, sidebars, share
bars, footers) so the extractor has to find the article, not just strip tags.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from articles import ARTICLES

HERE = Path(__file__).parent
e = html.escape


def render_body(blocks: list, p: str = "p", p_class: str = "") -> str:
    """The article body as HTML; ``p`` lets a layout use ``div`` soup instead of ``<p>``."""
    cls = f' class="{p_class}"' if p_class else ""
    out = []
    for kind, value in blocks:
        if kind == "p":
            out.append(f"<{p}{cls}>{e(value)}</{p}>")
        elif kind == "h2":
            out.append(f"<h2>{e(value)}</h2>")
        elif kind in ("ul", "ol"):
            items = "".join(f"<li>{e(i)}</li>" for i in value)
            out.append(f"<{kind}>{items}</{kind}>")
        elif kind == "quote":
            out.append(f"<blockquote><p>{e(value)}</p></blockquote>")
        elif kind == "pre":
            out.append(f"<pre><code>{e(value)}</code></pre>")
        elif kind == "table":
            head, *rows = value
            th = "".join(f"<th>{e(c)}</th>" for c in head)
            trs = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
            out.append(f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>")
    return "\n".join(out)


def gold_text(blocks: list) -> str:
    lines: list[str] = []
    for kind, value in blocks:
        if kind in ("ul", "ol"):
            lines.extend(value)
        elif kind == "table":
            lines.extend(" ".join(row) for row in value)
        elif kind == "pre":
            lines.extend(value.splitlines())
        else:
            lines.append(value)
    return "\n".join(lines) + "\n"


COOKIE = (
    '<div id="cookie-consent" class="cookie-banner" role="dialog"><p>We use cookies to '
    "improve your experience, measure audiences and show personalised advertising. By "
    "clicking Accept all you agree to the storing of cookies on your device.</p>"
    "<button>Accept all cookies</button><button>Manage preferences</button></div>"
)
SCRIPT = (
    "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push("
    "arguments)}gtag('js',new Date());</script>"
)


def head(title: str, extra: str = "", charset: str = "utf-8", lang: str = "en") -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="{charset}">'
        f"<title>{e(title)}</title><meta name='viewport' content='width=device-width'>"
        f"<style>body{{font-family:sans-serif}} .cookie-banner{{position:fixed}}</style>"
        f"{extra}{SCRIPT}</head>"
    )


def comments(names_texts: list[tuple[str, str]], wrapper: str = "section") -> str:
    items = "".join(
        f'<li class="comment"><div class="comment-author">{e(n)}</div>'
        f'<div class="comment-body"><p>{e(t)}</p></div><a href="#">Reply</a></li>'
        for n, t in names_texts
    )
    return (
        f'<{wrapper} id="comments" class="comments"><h3>{len(names_texts)} Comments</h3>'
        f'<ol class="comment-list">{items}</ol><form><textarea>Leave a comment</textarea>'
        f"<button>Post comment</button></form></{wrapper}>"
    )


def links(title: str, items: list[str], cls: str = "related") -> str:
    lis = "".join(f'<li><a href="/story/{i}">{e(t)}</a></li>' for i, t in enumerate(items))
    return f'<div class="{cls}"><h3>{e(title)}</h3><ul>{lis}</ul></div>'


def footer(site: str) -> str:
    return (
        f'<footer class="site-footer"><ul><li><a href="/about">About {e(site)}</a></li>'
        '<li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use'
        '</a></li><li><a href="/contact">Contact us</a></li></ul><p>Copyright 2026 '
        f"{e(site)}. All rights reserved. Registered in England and Wales.</p></footer>"
    )


def nav(items: list[str]) -> str:
    lis = "".join(f'<li><a href="/{i.lower()}">{e(i)}</a></li>' for i in items)
    return f'<nav class="main-nav"><ul>{lis}</ul></nav>'


NEWS_NAV = ["Home", "News", "Sport", "Business", "Culture", "Weather", "Opinion"]


def news_classic(a: dict) -> str:
    return (
        head(a["title"])
        + f"<body>{COOKIE}<header><a class='logo' href='/'>The Kelsby Courier</a>"
        + nav(NEWS_NAV)
        + "</header><main><article><h1>"
        + e(a["title"])
        + "</h1><div class='byline'>By Ruth Pennock, Local Democracy Reporter · "
        "14 May 2026</div><div class='share'><a>Share on Facebook</a><a>Share by email"
        "</a></div>"
        + render_body(a["body"])
        + "</article>"
        + links(
            "Related stories",
            [
                "Ferry operator named for bridge closure",
                "Harbour dredging to start next year",
                "Sailing club celebrates its centenary",
            ],
        )
        + comments(
            [
                ("harbourwatcher", "Good news, the old bridge is part of our history."),
                (
                    "J. Finlay",
                    "Eighteen months without a road bridge is going to hurt the "
                    "shops on the east side, mark my words.",
                ),
            ]
        )
        + "</main>"
        + footer("The Kelsby Courier")
        + "</body></html>"
    )


def blog_sidebar(a: dict) -> str:
    return (
        head(a["title"]) + "<body class='single-post'><div id='page'><div class='site-header'>"
        "<div class='site-title'><a href='/'>Crumb &amp; Crust</a></div>"
        "<div class='site-description'>A home baker's notebook</div>"
        + nav(["Home", "Recipes", "Starter guide", "About", "Shop"])
        + "</div><div id='content'><div id='primary'><div class='post'>"
        f"<h1 class='entry-title'>{e(a['title'])}</h1><div class='entry-meta'>Posted on "
        "March 3, 2026 by Hanna · 12 comments</div><div class='entry-content'>"
        + render_body(a["body"])
        + "</div><div class='entry-footer'>Tags: <a>sourdough</a>, <a>starter</a>, "
        "<a>baking</a></div></div>"
        + comments(
            [
                ("Tom", "The thermometer tip changed everything for me too!"),
                ("Priya", "Which mill do you buy your flour from? I am in Leeds."),
                ("Hanna", "Priya, I use a small mill near York, I will add a link."),
            ],
            "div",
        )
        + "</div><div id='secondary' class='widget-area'>"
        + links(
            "Recent posts", ["Rye starter in ten days", "My Dutch oven test", "Baguettes"], "widget"
        )
        + "<div class='widget'><h3>Newsletter</h3><p>Get new recipes by email every "
        "month. No spam, unsubscribe any time.</p><form><input type='email'><button>"
        "Subscribe</button></form></div><div class='widget tagcloud'><a>bread</a> "
        "<a>cakes</a> <a>flour</a> <a>starter</a> <a>rye</a></div></div></div>"
        + footer("Crumb & Crust")
        + "</div></body></html>"
    )


def docs_page(a: dict) -> str:
    toc = links(
        "Contents",
        ["Installation", "Quick start", "Configuration", "Cache layer", "Deployment", "Changelog"],
        "sidebar-toc",
    )
    return (
        head(a["title"])
        + "<body><div class='topbar'><a href='/'>Tessera docs</a> <input placeholder="
        "'Search docs'> <a href='/v2'>v2.4</a> <a href='https://git.example.org'>Source"
        "</a></div><div class='layout'><nav class='docs-nav'>"
        + toc
        + "</nav><main class='content'><div class='breadcrumbs'><a>Docs</a> / <a>Guide</a>"
        f" / Cache</div><h1>{e(a['title'])}</h1>"
        + render_body(a["body"])
        + "<div class='edit'><a href='#'>Edit this page</a> · Last updated on 2 Feb 2026"
        "</div><div class='pager'><a href='#'>Previous: Configuration</a> <a href='#'>"
        "Next: Deployment</a></div><div class='feedback'>Was this page helpful? <button>"
        "Yes</button><button>No</button></div></main></div>"
        + footer("Tessera project")
        + "</body></html>"
    )


def recipe(a: dict) -> str:
    return (
        head(a["title"])
        + f"<body>{COOKIE}<header>"
        + nav(["Recipes", "Soups", "Baking", "Quick dinners", "Collections"])
        + "</header><div class='ad-slot'>Advertisement</div><article class='recipe'>"
        f"<h1>{e(a['title'])}</h1><div class='meta'>Serves 4 · 40 minutes · Vegan</div>"
        "<a class='jump' href='#recipe'>Jump to recipe</a> <a class='print'>Print recipe</a>"
        + render_body(a["body"])
        + "</article><div class='ad-slot'>Advertisement</div><section class='reviews'>"
        "<h3>Reviews (48)</h3><div class='review'><span>★★★★★</span><p>Made this three "
        "times already, my kids love it.</p></div><div class='review'><span>★★★★</span>"
        "<p>Added a pinch of cumin, lovely.</p></div></section>"
        + links("You might also like", ["Spiced carrot soup", "Chickpea stew", "Weeknight dal"])
        + footer("Good Pot Kitchen")
        + "</body></html>"
    )


def div_soup(a: dict) -> str:
    nav_div = "".join(f"<div class='n7k'><a href='/{x}'>{x}</a></div>" for x in NEWS_NAV)
    return (
        head(a["title"])
        + "<body><div id='root'><div class='q1w'><div class='z9'>Northwest Nature News</div>"
        f"<div class='m3'>{nav_div}</div></div><div class='cc-x1' style='position:fixed'>"
        "This site uses cookies for analytics. <span class='btn'>OK</span> <span class="
        "'btn'>Reject</span></div><div class='l0 r8'><div class='t4'><div class='h1x'>"
        f"{e(a['title'])}</div><div class='d2'>Published 2 June 2026 · 3 min read</div>"
        + render_body(a["body"], p="div", p_class="tx9")
        + "</div><div class='s5'><div class='s5h'>Most read</div><div class='s5i'><a>"
        "Heron colony returns to the estuary</a></div><div class='s5i'><a>Beaver "
        "release approved</a></div><div class='s5i'><a>Five walks for autumn colours</a>"
        "</div></div></div><div class='f1'><a>About</a> <a>Privacy</a> <a>Advertise</a>"
        " © 2026 Northwest Nature News</div></div></body></html>"
    )


def wiki_like(a: dict) -> str:
    return (
        head(a["title"])
        + "<body><div id='mw-head'><a>Main page</a> <a>Random article</a> <a>Log in</a>"
        " <input placeholder='Search Openwiki'></div><div id='content'>"
        f"<h1 id='firstHeading'>{e(a['title'])}</h1><div id='siteSub'>From Openwiki, "
        "the free encyclopedia</div><div id='bodyContent'><table class='infobox'><tr>"
        "<th>Type</th><td>Water mill</td></tr><tr><th>Power source</th><td>Tidal "
        "flow</td></tr><tr><th>First recorded</th><td>c. 7th century</td></tr></table>"
        "<div id='toc'><h2>Contents</h2><ul><li>1 History</li><li>2 Operation</li>"
        "<li>3 See also</li><li>4 References</li></ul></div>"
        + render_body(a["body"])
        + "<h2>See also</h2><ul><li><a>Watermill</a></li><li><a>Tidal power</a></li>"
        "</ul><h2>References</h2><ol class='references'><li>Minchinton, W. (1979). "
        "Early tide mills: some problems. Technology and Culture.</li><li>Charlier, R. "
        "(2007). Forty candles for tidal power.</li></ol></div><div id='catlinks'>"
        "Categories: Watermills | Tidal power | Industrial history</div></div>"
        "<div id='footer'>This page was last edited on 4 April 2026. Text is available "
        "under a free licence.</div></body></html>"
    )


def press_release(a: dict) -> str:
    return (
        head(a["title"])
        + "<body><div class='brand'>Northfield County Council — Newsroom</div>"
        + nav(["Newsroom", "Press releases", "Media contacts", "Archive"])
        + "<div class='container'><div class='release'><span class='label'>FOR IMMEDIATE "
        f"RELEASE</span><h1>{e(a['title'])}</h1><p class='date'>12 November 2026</p>"
        + render_body(a["body"])
        + "<p class='end'>ENDS</p></div><div class='contact'><h4>Media contact</h4>"
        "<p>Press office, 01234 567890, press@northfield.example</p></div>"
        "<div class='social'>Follow us: <a>Facebook</a> <a>Instagram</a> <a>LinkedIn</a>"
        "</div></div>" + footer("Northfield County Council") + "</body></html>"
    )


def longform(a: dict) -> str:
    body = a["body"]
    mid = len(body) // 2
    inset = (
        "<aside class='pullquote'>A night on board replaces both a flight and a hotel."
        "</aside><div class='newsletter-inline'><h4>Get the weekly Long Read</h4><p>One "
        "deeply reported story every Sunday.</p><input type='email'><button>Sign up"
        "</button></div><p class='read-more'>Read more: <a href='/x'>Why airlines love "
        "short routes</a></p>"
    )
    return (
        head(a["title"], "<meta property='og:type' content='article'>")
        + f"<body>{COOKIE}<header class='masthead'><a>The Long Read</a>"
        + nav(["Features", "Travel", "Climate", "Ideas", "Podcasts"])
        + "</header><article><header class='article-header'><p class='kicker'>Travel</p>"
        f"<h1>{e(a['title'])}</h1><p class='standfirst'>Sleeper services are coming "
        "back across Europe. Can they last?</p><p class='byline'>Words by Ilse Varga</p>"
        "</header><figure><img src='/train.jpg' alt='A sleeper train at dawn'>"
        "<figcaption>A sleeper pulls into the station at dawn. Photograph: archive"
        "</figcaption></figure><div class='article-body'>"
        + render_body(body[:mid])
        + inset
        + render_body(body[mid:])
        + "</div></article><div id='disqus_thread'><h3>Join the discussion</h3><div "
        "class='post'><p>I took the sleeper to Vienna last month, wonderful trip.</p>"
        "</div></div>"
        + links(
            "More from Travel",
            ["The ferries that time forgot", "Cycling the Danube", "Europe's longest tram line"],
        )
        + footer("The Long Read")
        + "</body></html>"
    )


def review(a: dict) -> str:
    return (
        head(a["title"])
        + "<body><header>"
        + nav(["Reviews", "Kitchen", "Home", "Tech", "Deals"])
        + "</header><div class='page'><article><h1>"
        + e(a["title"])
        + "</h1><div class='rating-box'><span class='score'>8/10</span><span>Editor's "
        "choice</span></div><div class='disclosure'>We may earn a commission when you buy "
        "through links on our site.</div>"
        + render_body(a["body"])
        + "<div class='buy-box'><h4>Where to buy</h4><ul><li><a>ShopMart £39.99</a></li>"
        "<li><a>KitchenHub £41.50</a></li></ul></div></article>"
        + links(
            "Best kettles 2026", ["Best budget kettle", "Best smart kettle", "Best cordless kettle"]
        )
        + comments([("Sam", "Does the dial click into place or spin freely?")])
        + "</div>"
        + footer("HomeTested")
        + "</body></html>"
    )


def french_latin1(a: dict) -> str:
    return (
        head(a["title"], charset="iso-8859-1", lang="fr")
        + "<body><div id='bandeau-cookies'>Ce site utilise des cookies pour mesurer "
        "l'audience. <button>Tout accepter</button> <button>Paramétrer</button></div>"
        "<header>"
        + nav(["Accueil", "Actualités", "Sports", "Culture", "Météo"])
        + f"</header><main><article><h1>{e(a['title'])}</h1><p class='auteur'>Par la "
        "rédaction, publié le 8 mars 2026</p>"
        + render_body(a["body"])
        + "</article><aside><h3>À lire aussi</h3><ul><li><a>La fête de la musique "
        "s'organise</a></li><li><a>Travaux sur le pont Neuf</a></li></ul></aside>"
        "<section class='commentaires'><h3>Commentaires</h3><p>Enfin ! Nous attendions "
        "cette réouverture depuis si longtemps.</p></section></main><footer>Mentions "
        "légales · Contact · © 2026 Le Petit Quotidien</footer></body></html>"
    )


def listicle(a: dict) -> str:
    cards = "".join(
        f"<div class='card'><img src='/c{i}.jpg'><a>{t}</a></div>"
        for i, t in enumerate(
            ["How to say no to meetings", "The two-minute rule", "Desk setups that help"]
        )
    )
    return (
        head(a["title"])
        + f"<body>{COOKIE}<div class='modal newsletter'><h3>Work smarter</h3><p>Join "
        "80,000 readers getting our productivity tips.</p><button>Subscribe</button>"
        "</div><header>"
        + nav(["Work", "Money", "Health", "Tech"])
        + "</header><main><div class='share-bar'><a>Tweet</a><a>Share</a><a>Pin</a></div>"
        f"<article><h1>{e(a['title'])}</h1><p class='updated'>Updated January 2026</p>"
        + render_body(a["body"])
        + "</article><section class='more'><h3>You may also like</h3>"
        + cards
        + "</section></main>"
        + footer("Worklife Weekly")
        + "</body></html>"
    )


def paper(a: dict) -> str:
    return (
        head(a["title"], "<meta name='citation_title' content='x'>")
        + "<body><div class='journal-header'><a>Journal of Field Soil Science</a> "
        "<a>Current issue</a> <a>Submit</a> <a>Sign in</a></div><main><article>"
        f"<h1>{e(a['title'])}</h1><div class='authors'>A. Okafor, L. Brandt and "
        "M. Ishikawa</div><div class='doi'>https://doi.example/10.0000/jfss.2026.114"
        "</div><div class='keywords'>Keywords: earthworms, tillage, clay, soil structure"
        "</div>"
        + render_body(a["body"])
        + "<section class='references'><h2>References</h2><ol><li>Smith, J. (2015). "
        "Tillage and soil fauna. Soil Biology 12, 44-59.</li><li>Garcia, P. (2019). "
        "Mustard extraction revisited. Pedobiologia 70, 1-8.</li></ol></section>"
        "</article><aside class='metrics'>Downloads: 1,204 · Citations: 7 <a>Download "
        "PDF</a> <a>Cite</a></aside></main>"
        + footer("Field Soil Science Society")
        + "</body></html>"
    )


def local_news(a: dict) -> str:
    return (
        head(a["title"]) + "<body><div class='weather-widget'>Today 12°C, light rain</div>"
        "<div class='paywall-note'>You have 3 free articles left this month. "
        "<a>Subscribe for £1</a></div><header>"
        + nav(NEWS_NAV)
        + "</header><div class='grid'><div class='main-col'><h1>"
        + e(a["title"])
        + "</h1><div class='story-body'>"
        + render_body(a["body"])
        + "</div><div class='tags'>Topics: <a>Council</a> <a>Budget</a></div>"
        + comments(
            [
                ("Night nurse", "I walk home at 1am after my shift. This is a worry."),
                ("Realist", "Lights on empty streets at 3am are a waste of money."),
            ]
        )
        + "</div><div class='side-col'>"
        + links(
            "Most read",
            ["Bypass reopens early", "School wins robotics prize", "Market hall plans revealed"],
            "most-read",
        )
        + links("Trending", ["Lottery winner", "Snow forecast"], "trending")
        + "</div></div>"
        + footer("County Gazette")
        + "</body></html>"
    )


def tutorial(a: dict) -> str:
    return (
        head(a["title"])
        + "<body><header><a>CodeCrafts</a>"
        + nav(["Tutorials", "Python", "Data", "Web", "Newsletter"])
        + "</header><main><section class='hero'><h1>"
        + e(a["title"])
        + "</h1><p class='meta'>Beginner · 6 min read</p></section><section "
        "class='tutorial'>"
        + render_body(a["body"])
        + "</section><section class='helpful'><p>Was this tutorial helpful?</p><button>"
        "Yes</button><button>No</button></section><section class='author-box'><h4>About "
        "the author</h4><p>Dana writes about practical Python for analysts.</p>"
        "</section></main>"
        + links("Next tutorials", ["Reading Excel files", "Cleaning dates in CSVs"])
        + footer("CodeCrafts")
        + "</body></html>"
    )


LAYOUTS: dict[str, Callable[[dict], str]] = {
    "01_harbour_bridge": news_classic,
    "02_sourdough_notes": blog_sidebar,
    "03_config_reference": docs_page,
    "04_lentil_soup": recipe,
    "05_river_survey": div_soup,
    "06_tidal_mill": wiki_like,
    "07_press_release": press_release,
    "08_night_trains": longform,
    "09_kettle_review": review,
    "10_fr_marche": french_latin1,
    "11_focus_tips": listicle,
    "12_soil_paper": paper,
    "13_council_budget": local_news,
    "14_csv_tutorial": tutorial,
}


def main() -> None:
    (HERE / "pages").mkdir(exist_ok=True)
    (HERE / "gold").mkdir(exist_ok=True)
    for name, article in ARTICLES.items():
        page = LAYOUTS[name](article)
        charset = str(article.get("charset", "utf-8"))
        (HERE / "pages" / f"{name}.html").write_bytes(page.encode(charset))
        (HERE / "gold" / f"{name}.txt").write_text(gold_text(article["body"]), encoding="utf-8")
    print(f"wrote {len(ARTICLES)} pages")


if __name__ == "__main__":
    main()
