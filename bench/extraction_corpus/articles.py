"""The article texts of the extraction corpus: original prose written for LoCAL2 (CC0).

Each article is a title plus body blocks: ``("p", text)``, ``("h2", text)``,
``("ul", [items])``, ``("ol", [items])``, ``("quote", text)``, ``("pre", code)``,
``("table", [[cells], ...])``. The body blocks are the gold main text; everything the
layouts in ``build_corpus.py`` add around them (menus, banners, comments) is boilerplate.
"""

from __future__ import annotations

Block = tuple[str, object]

ARTICLES: dict[str, dict[str, object]] = {
    "01_harbour_bridge": {
        "title": "Harbour town votes to keep its old swing bridge",
        "lang": "en",
        "body": [
            (
                "p",
                "Residents of Kelsby voted on Tuesday to repair rather than replace the "
                "iron swing bridge that has crossed the harbour mouth since 1894, ending a "
                "two-year argument that split the town council and filled the letters page "
                "of the local paper almost every week.",
            ),
            (
                "p",
                "The repair plan, which passed with 61 percent of the vote, will close the "
                "bridge to cars for eighteen months while engineers replace the corroded "
                "pivot bearing and strengthen the deck. Pedestrians and cyclists will be "
                "carried across the channel by a temporary ferry that the council has "
                "promised will run every fifteen minutes from six in the morning.",
            ),
            (
                "p",
                "Supporters of a new fixed bridge argued that the swing mechanism is "
                "expensive to staff and that fishing boats tall enough to need it have "
                "become rare. Opponents answered that the old structure is the only reason "
                "many visitors stop in Kelsby at all, and that a fixed span would block the "
                "sailing club's larger boats from the inner basin.",
            ),
            (
                "quote",
                "We were never voting about a bridge, we were voting about what kind "
                "of town this is going to be in fifty years.",
            ),
            (
                "p",
                "That was how Marion Achterberg, who chairs the harbour users' "
                "association, described the result outside the polling station. The cost "
                "of the repair is estimated at 14 million, about half of what the "
                "replacement would have cost, though the council's own engineers warned "
                "that a second major repair will be needed within forty years.",
            ),
            (
                "p",
                "Work is expected to begin in March, after the winter storms, and the "
                "council said it would publish a weekly progress report on its website.",
            ),
        ],
    },
    "02_sourdough_notes": {
        "title": "What three years of sourdough taught me about patience",
        "lang": "en",
        "body": [
            (
                "p",
                "When I started baking sourdough I treated the starter like a machine: "
                "feed it at eight, bake at noon, expect the same loaf every time. It took "
                "most of a year of dense, sour bricks before I accepted that the starter "
                "keeps its own schedule and my job is mostly to watch it.",
            ),
            ("h2", "Temperature matters more than timing"),
            (
                "p",
                "The single change that improved my bread the most was a cheap "
                "thermometer. At 21 degrees my starter peaks about six hours after a "
                "feed; at 26 degrees it peaks in under four. Recipes that say to wait a "
                "fixed number of hours quietly assume a kitchen like the author's.",
            ),
            (
                "p",
                "I now write down the room temperature next to every feed and every "
                "bake, and after a few months the notebook became a better guide than any "
                "recipe I had followed.",
            ),
            ("h2", "Flour is not just flour"),
            (
                "p",
                "Switching from a supermarket bread flour to a stone-ground flour from a "
                "small mill changed how much water the dough could take. The fresher flour "
                "absorbed almost ten percent more water and the crumb opened up in a way "
                "that no amount of folding had achieved before.",
            ),
            (
                "ul",
                [
                    "Keep notes on temperature, flour and timing for every bake.",
                    "Change one thing at a time so you know what made the difference.",
                    "Judge the dough by how it looks and feels, not by the clock.",
                ],
            ),
            (
                "p",
                "None of this is new advice, but I had to bake a lot of bad bread before "
                "I believed it.",
            ),
        ],
    },
    "03_config_reference": {
        "title": "Configuring the cache layer",
        "lang": "en",
        "body": [
            (
                "p",
                "The cache layer stores rendered fragments so that repeated requests "
                "for the same page do not hit the database. It is disabled by default and "
                "is configured in the cache section of the main settings file.",
            ),
            ("h2", "Enabling the cache"),
            (
                "p",
                "Set the backend and a time to live. The memory backend keeps entries "
                "in the worker process and is only suitable for a single worker; use the "
                "shared backend when you run more than one.",
            ),
            ("pre", "cache:\n  backend: shared\n  ttl_seconds: 300\n  max_entries: 10000"),
            ("h2", "Invalidation"),
            (
                "p",
                "Entries are invalidated when the record they were rendered from "
                "changes. Fragments that depend on several records list all of them as "
                "dependencies, and a change to any one of them removes the fragment.",
            ),
            (
                "table",
                [
                    ["Option", "Default", "Meaning"],
                    ["backend", "none", "Where entries are kept"],
                    ["ttl_seconds", "300", "How long an entry lives"],
                    ["max_entries", "10000", "Oldest entries are evicted beyond this"],
                ],
            ),
            (
                "p",
                "If pages show stale content after a deployment, clear the cache with "
                "the management command before restarting the workers.",
            ),
        ],
    },
    "04_lentil_soup": {
        "title": "Red lentil soup with smoked paprika",
        "lang": "en",
        "body": [
            (
                "p",
                "This is the soup I make on the first cold evening of every autumn. It "
                "takes forty minutes, uses things that keep for months in the cupboard, "
                "and tastes better the next day, so I always make a double batch.",
            ),
            (
                "p",
                "Red lentils collapse as they cook, which gives the soup its body "
                "without any cream. The smoked paprika is what makes it taste like it "
                "simmered for hours, so do not skip it.",
            ),
            ("h2", "Ingredients"),
            (
                "ul",
                [
                    "250 g red lentils, rinsed",
                    "1 large onion, chopped",
                    "2 carrots, diced",
                    "3 cloves garlic, sliced",
                    "2 teaspoons smoked paprika",
                    "1 tin chopped tomatoes",
                    "1.2 litres vegetable stock",
                    "Juice of half a lemon",
                ],
            ),
            ("h2", "Method"),
            (
                "ol",
                [
                    "Soften the onion and carrots in olive oil for ten minutes.",
                    "Add the garlic and paprika and stir for one minute.",
                    "Add the lentils, tomatoes and stock and simmer for twenty-five minutes.",
                    "Blend half of the soup, stir it back in and finish with lemon juice and salt.",
                ],
            ),
        ],
    },
    "05_river_survey": {
        "title": "Volunteers count record number of otters on the Lune",
        "lang": "en",
        "body": [
            (
                "p",
                "A survey carried out by more than two hundred volunteers along the "
                "river Lune found signs of otters at 78 of the 90 sites checked this "
                "spring, the highest share since the count began in 2009.",
            ),
            (
                "p",
                "Volunteers look for spraints, footprints and feeding remains under "
                "bridges and on the banks rather than for the animals themselves, which "
                "are mostly active at night and rarely seen.",
            ),
            (
                "p",
                "The trust that organises the survey said the recovery reflects two "
                "decades of cleaner water and the removal of several weirs that had "
                "blocked fish from moving upstream. It warned, however, that sewage "
                "overflows after heavy rain remain a problem on the lower river.",
            ),
            (
                "p",
                "Next year the trust plans to add camera traps at twelve sites to "
                "estimate how many individual otters use the river, and it is looking "
                "for volunteers who can check the cameras once a fortnight.",
            ),
        ],
    },
    "06_tidal_mill": {
        "title": "Tide mill",
        "lang": "en",
        "body": [
            (
                "p",
                "A tide mill is a water mill driven by the rise and fall of the tide. "
                "A dam with a sluice is built across a creek or estuary; the incoming tide "
                "fills a pond behind the dam, and the water is released through a wheel "
                "when the tide has fallen far enough to give a useful head.",
            ),
            ("h2", "History"),
            (
                "p",
                "Tide mills were built in Europe from at least the early medieval "
                "period and were common along the Atlantic coasts by the eighteenth "
                "century. Because they depend on the tide rather than on rainfall they "
                "could work through dry summers when river mills stood idle.",
            ),
            (
                "p",
                "Their main drawback was the working day, which moved by about fifty "
                "minutes every day with the tides, so that millers often worked at night.",
            ),
            ("h2", "Operation"),
            (
                "p",
                "A mill could usually run for four to six hours on each tide. Larger "
                "mills used several wheels and could grind several tonnes of grain a day. "
                "Most were converted or abandoned when steam and later electric mills "
                "made milling independent of the tide.",
            ),
        ],
    },
    "07_press_release": {
        "title": "Northfield Library launches free repair café",
        "lang": "en",
        "body": [
            (
                "p",
                "Northfield Public Library will open a monthly repair café on the "
                "first Saturday of every month from next spring, where volunteers will "
                "help residents fix small appliances, clothes, bicycles and toys free of "
                "charge.",
            ),
            (
                "p",
                "The project is funded by a two-year grant from the county's waste "
                "reduction fund and will use the library's ground floor meeting room, "
                "which is being fitted with workbenches, good lighting and a "
                "ventilated soldering area.",
            ),
            (
                "quote",
                "People already come to the library to learn things. Learning to "
                "fix a lamp or a zip is no different from learning a language.",
            ),
            (
                "p",
                "Head librarian Osei Mensah said the library hopes to recruit at least "
                "twenty volunteer fixers before the first session. Anyone with repair "
                "skills can sign up at the information desk.",
            ),
        ],
    },
    "08_night_trains": {
        "title": "The slow return of the night train",
        "lang": "en",
        "body": [
            (
                "p",
                "For most of the last thirty years, the sleeper train looked like a "
                "relic. Budget airlines undercut it, rail companies stopped replacing its "
                "ageing carriages, and one route after another was quietly dropped from "
                "the timetable.",
            ),
            (
                "p",
                "That trend has reversed. New operators have started routes between "
                "cities that are too far apart for a day train but close enough that a "
                "night on board replaces both a flight and a hotel. The economics remain "
                "difficult: a sleeper carriage carries a fraction of the passengers of a "
                "day coach and earns money on only one journey a day.",
            ),
            ("h2", "Who rides at night"),
            (
                "p",
                "Operators say their passengers are not only travellers who avoid "
                "flying for environmental reasons. Many are business travellers who "
                "value arriving in a city centre at seven in the morning, and families "
                "for whom a compartment is cheaper than four plane tickets.",
            ),
            (
                "p",
                "The bottleneck is rolling stock. Building new sleeper carriages takes "
                "years, few factories make them, and second-hand carriages are almost "
                "gone. Several operators have postponed new routes because they simply "
                "have no trains to run on them.",
            ),
            (
                "p",
                "Whether the revival lasts will depend on track access charges and on "
                "whether governments treat night trains as part of their climate policy "
                "rather than as a commercial niche.",
            ),
        ],
    },
    "09_kettle_review": {
        "title": "Review: the Brightwell 1.7 litre kettle",
        "lang": "en",
        "body": [
            (
                "p",
                "The Brightwell is a plain stainless steel kettle with one unusual "
                "feature: a dial that lets you choose the water temperature between 60 and "
                "100 degrees in steps of five. We used it every day for a month.",
            ),
            (
                "p",
                "It boils a full litre in just under three minutes, which is about "
                "average, and it is pleasantly quiet until the last few seconds. The "
                "temperature dial is accurate to within two degrees by our thermometer, "
                "which matters if you brew green tea or make pour-over coffee.",
            ),
            (
                "p",
                "The keep-warm function holds the chosen temperature for thirty "
                "minutes. The lid opens fully, so the inside is easy to descale, and the "
                "limescale filter lifts out for rinsing.",
            ),
            ("h2", "What we did not like"),
            (
                "p",
                "The handle gets warm after a few boils in a row, and the water window "
                "is hard to read against a light kitchen wall. The cable is also short.",
            ),
            (
                "ul",
                [
                    "Pros: accurate temperature control, quiet, easy to clean",
                    "Cons: warm handle, hard-to-read level window, short cable",
                ],
            ),
            (
                "p",
                "Verdict: a solid kettle for tea and coffee drinkers who want "
                "temperature control without paying for a smart app.",
            ),
        ],
    },
    "10_fr_marche": {
        "title": "Le marché couvert rouvre après deux ans de travaux",
        "lang": "fr",
        "charset": "iso-8859-1",
        "body": [
            (
                "p",
                "Après deux années de travaux, le marché couvert de la place des "
                "Halles a rouvert ses portes samedi matin. Dès sept heures, une longue file "
                "d'attente s'était formée devant l'entrée principale.",
            ),
            (
                "p",
                "La rénovation a permis de remplacer la verrière, d'isoler la toiture "
                "et d'installer un système de ventilation qui devrait rendre les étés "
                "plus supportables pour les commerçants. Trente-deux étals sont désormais "
                "occupés, contre vingt-quatre avant la fermeture.",
            ),
            (
                "p",
                "Plusieurs producteurs regrettent toutefois la hausse des loyers, qui "
                "ont augmenté d'environ quinze pour cent. La mairie affirme que cette "
                "hausse reste inférieure à celle des locaux commerciaux du centre-ville.",
            ),
            (
                "p",
                "Le marché sera ouvert du mardi au dimanche, de sept heures à treize "
                "heures, et le vendredi soir jusqu'à vingt heures.",
            ),
        ],
    },
    "11_focus_tips": {
        "title": "Seven ways to protect your focus at work",
        "lang": "en",
        "body": [
            (
                "p",
                "Most advice about concentration assumes you control your calendar. "
                "These suggestions are for people who do not, and who have to find focus "
                "in the gaps between meetings and messages.",
            ),
            ("h2", "1. Decide the next task before you stop"),
            (
                "p",
                "Ending each work block by writing down the very next step removes the "
                "slow start when you come back to it.",
            ),
            ("h2", "2. Batch your messages"),
            (
                "p",
                "Reading messages every few minutes feels responsive but fragments the "
                "day. Checking at fixed times is usually fast enough for everyone.",
            ),
            ("h2", "3. Make interruptions visible"),
            (
                "p",
                "Keep a tally of interruptions for a week. The numbers often persuade a "
                "team to change habits faster than any argument.",
            ),
            ("h2", "4. Protect one long block"),
            (
                "p",
                "One uninterrupted ninety-minute block a day does more than several "
                "scattered half hours.",
            ),
            ("h2", "5. Close what you are not using"),
            ("p", "Every open window is a small invitation to switch tasks."),
            ("h2", "6. Work on paper first"),
            (
                "p",
                "Sketching a plan by hand before opening the computer keeps the hard "
                "thinking away from the distractions.",
            ),
            ("h2", "7. Stop at a reasonable hour"),
            ("p", "Focus is a daily resource. Working late borrows from tomorrow."),
        ],
    },
    "12_soil_paper": {
        "title": "Earthworm density under long-term no-till management in clay soils",
        "lang": "en",
        "body": [
            ("h2", "Abstract"),
            (
                "p",
                "We compared earthworm density and biomass in paired fields under "
                "conventional ploughing and at least ten years of no-till management on "
                "heavy clay soils. Across eighteen farms, no-till fields held on average "
                "2.4 times more earthworms per square metre, with the largest difference "
                "for deep-burrowing species.",
            ),
            ("h2", "Introduction"),
            (
                "p",
                "Earthworms improve soil structure and drainage, which is of particular "
                "value on clay soils that are prone to waterlogging. Ploughing is known to "
                "reduce earthworm numbers, but few studies have examined fields that have "
                "been managed without tillage for more than a decade.",
            ),
            ("h2", "Methods"),
            (
                "p",
                "Earthworms were sampled in spring and autumn by hand-sorting soil "
                "blocks of 20 by 20 by 20 centimetres, followed by mustard extraction to "
                "recover deep-burrowing individuals. Ten blocks were taken per field.",
            ),
            ("h2", "Results"),
            (
                "p",
                "Density was higher under no-till on sixteen of the eighteen farms. The "
                "two exceptions were fields that had been compacted by harvest traffic in "
                "a wet autumn.",
            ),
            ("h2", "Conclusion"),
            (
                "p",
                "Long-term no-till management substantially increases earthworm "
                "populations on clay soils, provided that compaction is avoided.",
            ),
        ],
    },
    "13_council_budget": {
        "title": "Council approves budget with cuts to street lighting",
        "lang": "en",
        "body": [
            (
                "p",
                "The county council approved its budget for next year on Thursday "
                "evening after a four-hour meeting, including a plan to switch off one in "
                "three street lights between midnight and five in the morning on "
                "residential roads.",
            ),
            (
                "p",
                "The council says the change will save about 900,000 a year in "
                "electricity and maintenance. Main roads, junctions, pedestrian crossings "
                "and streets near hospitals will not be affected.",
            ),
            (
                "p",
                "Opposition councillors argued that the savings did not justify the "
                "risk to people walking home late, especially shift workers. An amendment "
                "that would have funded the lighting from reserves was defeated by "
                "thirty-one votes to twenty-two.",
            ),
            (
                "p",
                "The budget also raises parking charges in the three largest towns by "
                "ten percent and protects spending on school transport, which had been "
                "under review.",
            ),
            (
                "p",
                "Residents can comment on the lighting plan during a six-week "
                "consultation that opens next month.",
            ),
        ],
    },
    "14_csv_tutorial": {
        "title": "How to merge two CSV files by a shared column",
        "lang": "en",
        "body": [
            (
                "p",
                "Merging two spreadsheets that share an identifier is one of the most "
                "common data chores. This tutorial shows how to do it with the standard "
                "library alone, without installing anything.",
            ),
            ("h2", "Step 1: read both files"),
            (
                "p",
                "Read each file into a dictionary keyed by the shared column, so that "
                "looking up a row is instant.",
            ),
            (
                "pre",
                "import csv\nwith open('people.csv') as f:\n"
                "    people = {row['id']: row for row in csv.DictReader(f)}",
            ),
            ("h2", "Step 2: join the rows"),
            (
                "p",
                "Loop over the second file and combine each row with the matching "
                "row from the first. Rows without a match are collected separately so "
                "nothing is lost silently.",
            ),
            ("h2", "Step 3: write the result"),
            (
                "p",
                "Write the merged rows with a DictWriter whose field names are the "
                "union of both headers, and report how many rows had no match.",
            ),
            (
                "table",
                [
                    ["File", "Rows", "Matched"],
                    ["people.csv", "1200", "1187"],
                    ["orders.csv", "5400", "5391"],
                ],
            ),
            (
                "p",
                "For files larger than memory, sort both by the key and merge them in "
                "one pass instead.",
            ),
        ],
    },
}
