"""Question / answer-passage pairs for ``bench/page_text.py``.

Each pair is ``(page, question, needle)``: the needle is a short exact phrase of the passage
that answers the question; a fetch "reaches" the answer when the needle is in the text the
model is shown. Questions are worded as a person would ask, not copied from the passage.

- ``digest``: the 14 articles of ``bench/extraction_corpus`` (LoCAL2's own CC0 prose) on one
  long blog-archive page. Two questions per article (one for the French one).
- ``pyref:<topic>``: long pages of the Python language reference as shipped with the
  interpreter (``pydoc_data.topics``, PSF licence). The passages asked about were drawn at
  random among paragraphs over 120 characters before the questions were written, so the
  answers sit anywhere on the page: four per topic (``random.Random(13)``), then three more
  on each of the seven longest (``random.Random(29)``; one repeat and one table row skipped).
"""

from __future__ import annotations

PAIRS: list[tuple[str, str, str]] = [
    # --- digest: the extraction corpus's articles on one page --------------------------------
    ("digest", "How long will the Kelsby bridge be closed to cars?", "for eighteen months"),
    ("digest", "What will repairing the swing bridge cost?", "estimated at 14 million"),
    (
        "digest",
        "How fast does a sourdough starter peak in a warm kitchen at 26 degrees?",
        "at 26 degrees it peaks in under four",
    ),
    (
        "digest",
        "What difference did stone-ground flour from a small mill make?",
        "absorbed almost ten percent more water",
    ),
    (
        "digest",
        "Which cache backend should I choose when running several workers?",
        "use the shared backend when you run more than one",
    ),
    (
        "digest",
        "Pages look stale after a deployment, what should I do?",
        "clear the cache with the management command",
    ),
    ("digest", "How many grams of lentils does the soup need?", "250 g red lentils"),
    ("digest", "For how long does the lentil soup simmer?", "simmer for twenty-five minutes"),
    ("digest", "At how many survey sites did volunteers find otters?", "78 of the 90 sites"),
    (
        "digest",
        "How will the trust estimate the number of otters using the river?",
        "add camera traps at twelve sites",
    ),
    ("digest", "How many hours can a tide mill work per tide?", "four to six hours on each tide"),
    (
        "digest",
        "Why did millers at tide mills often have to work at night?",
        "moved by about fifty minutes every day",
    ),
    (
        "digest",
        "When will Northfield library hold its repair cafe?",
        "first Saturday of every month",
    ),
    ("digest", "How many volunteer fixers is the library hoping for?", "at least twenty volunteer"),
    (
        "digest",
        "What is stopping operators from launching more sleeper routes?",
        "The bottleneck is rolling stock",
    ),
    (
        "digest",
        "Apart from people avoiding planes, who takes night trains?",
        "Many are business travellers",
    ),
    (
        "digest",
        "How long does the Brightwell kettle keep the water hot?",
        "holds the chosen temperature for thirty minutes",
    ),
    (
        "digest",
        "What are the drawbacks of the Brightwell kettle?",
        "The handle gets warm after a few boils",
    ),
    (
        "digest",
        "Combien d'étals sont occupés dans le marché couvert rénové ?",
        "Trente-deux étals sont désormais occupés",
    ),
    (
        "digest",
        "How long should my one uninterrupted focus block be each day?",
        "One uninterrupted ninety-minute block a day",
    ),
    (
        "digest",
        "How do I persuade my team that we get interrupted too much?",
        "Keep a tally of interruptions for a week",
    ),
    (
        "digest",
        "How many more earthworms live in no-till fields than ploughed ones?",
        "2.4 times more earthworms",
    ),
    (
        "digest",
        "How did the researchers collect deep-burrowing worms?",
        "followed by mustard extraction",
    ),
    (
        "digest",
        "How much money will turning off street lights at night save?",
        "save about 900,000 a year",
    ),
    ("digest", "By how much are parking charges going up?", "three largest towns by ten percent"),
    (
        "digest",
        "How can I merge two CSV files too big to fit in memory?",
        "sort both by the key and merge them in one pass",
    ),
    (
        "digest",
        "What happens to rows that have no matching id when joining the spreadsheets?",
        "Rows without a match are collected separately",
    ),
    # --- pyref: the Python language reference ----------------------------------------------
    (
        "pyref:specialnames",
        "Can a module define __getattr__ to compute missing module attributes?",
        "can be also used to customize access to module attributes",
    ),
    (
        "pyref:specialnames",
        "Which per-instance attributes are no longer created when a class declares slots?",
        "reserves space for the declared variables",
    ),
    (
        "pyref:specialnames",
        "What if I give __slots__ a dict instead of a list?",
        "the dictionary keys will be used as the slot names",
    ),
    (
        "pyref:specialnames",
        "Why does putting a dunder method in an instance's __dict__ not affect len() or repr()?",
        "only guaranteed to work correctly if defined on an object",
    ),
    (
        "pyref:compound",
        "Is continue allowed inside a finally block?",
        'was illegal in the "finally" clause',
    ),
    (
        "pyref:compound",
        "Where is the with statement specified?",
        "background, and examples for the Python",
    ),
    (
        "pyref:compound",
        "In a match statement, when does the guard expression get evaluated?",
        'If the pattern failed, the "guard" is not evaluated',
    ),
    (
        "pyref:compound",
        "Can a match statement contain two catch-all cases?",
        "may have at most one irrefutable case block",
    ),
    (
        "pyref:types",
        "Why are negative integers represented as they are for bitwise operations?",
        "most meaningful interpretation of shift and mask operations",
    ),
    (
        "pyref:types",
        "How does a[i:j:k] slicing with a step select items?",
        "selects all items of *a* with index *x* where",
    ),
    (
        "pyref:types",
        "Can an immutable set be used as a key in a dict?",
        "it can be used again as an element of another set",
    ),
    (
        "pyref:types",
        "Which code object flag marks compilation with future division?",
        "is set if the function was compiled with future division",
    ),
    (
        "pyref:formatstrings",
        "How do I put a literal { in a str.format template?",
        "it can be escaped by doubling",
    ),
    (
        "pyref:formatstrings",
        "Which conversions like !r can a replacement field use?",
        "Three conversion flags are currently supported",
    ),
    (
        "pyref:formatstrings",
        "Does alignment do anything if I don't set a width?",
        "the alignment option has no meaning in this case",
    ),
    (
        "pyref:formatstrings",
        "What presentation type is the default for strings?",
        "String format. This is the default type for strings",
    ),
    (
        "pyref:string-methods",
        "Where does the standard library provide regular expressions?",
        'regular expression support in the "re" module',
    ),
    (
        "pyref:string-methods",
        "Every how many columns are tab stops placed by expandtabs by default?",
        "default is 8, giving tab positions at columns 0, 8, 16",
    ),
    (
        "pyref:string-methods",
        "How can format_map leave missing keys as their own names?",
        "Guido was born in country",
    ),
    (
        "pyref:string-methods",
        "What does ljust return when the width is smaller than the string?",
        "Return the string left justified in a string of length",
    ),
    (
        "pyref:typesseq",
        "What is a faster way than + to build a long string from many pieces?",
        'you can build a list and use "str.join()" at the end',
    ),
    (
        "pyref:typesseq",
        "Which abstract base class does range implement?",
        'Range objects implement the "collections.abc.Sequence" ABC',
    ),
    ("pyref:typesseq", "Is 11 in range(0, 20, 2)?", ">>> 11 in r"),
    (
        "pyref:typesseq",
        "When are two ranges equal?",
        "two range objects are considered equal if they represent the same sequence",
    ),
    (
        "pyref:debugger",
        "Can my pdb startup file run commands such as next?",
        "can now contain commands that continue debugging",
    ),
    (
        "pyref:debugger",
        "How do I get pdb help about the ! command?",
        "must be entered to get help on the",
    ),
    (
        "pyref:debugger",
        "What does the >> marker mean when pdb lists source code?",
        "the line where the exception was originally raised or propagated",
    ),
    (
        "pyref:debugger",
        "How does pdb decide which module a frame belongs to?",
        'is determined by the "__name__" in the frame globals',
    ),
    (
        "pyref:attribute-access",
        "Is there an audit hook when attributes are set on an object?",
        'raises an auditing event "object.__setattr__"',
    ),
    (
        "pyref:attribute-access",
        "How can a module get properties or custom attribute setting?",
        'attribute of a module object to a subclass of "types.ModuleType"',
    ),
    (
        "pyref:attribute-access",
        "When do the __get__ and __set__ hooks of a descriptor apply?",
        "The following methods only apply when an instance of the class containing the method",
    ),
    (
        "pyref:attribute-access",
        "In what order does Python look up a.x by default?",
        "has a lookup chain starting with",
    ),
    (
        "pyref:typesmapping",
        "Do dict.keys() results update when the dict changes later?",
        "They provide a dynamic view on the dictionary",
    ),
    (
        "pyref:typesmapping",
        "What order does reversed() give on a dictionary view?",
        "The view will be iterated in reverse order of the insertion",
    ),
    (
        "pyref:typesmapping",
        "Show me an example of a keys view after deleting entries.",
        "view objects are dynamic and reflect dict changes",
    ),
    (
        "pyref:typesmapping",
        "Can I intersect a dict's keys with a set?",
        "keys & {'eggs', 'bacon', 'salad'}",
    ),
    (
        "pyref:assignment",
        "Where does assignment bind a name that is not declared global or nonlocal?",
        "the name is bound to the object in the current local namespace",
    ),
    (
        "pyref:assignment",
        "Can I unpack into several targets with +=?",
        "cannot be an unpacking",
    ),
    (
        "pyref:assignment",
        "Does x += 1 assign the same way an ordinary assignment does?",
        "is handled the same way as normal assignments",
    ),
    (
        "pyref:assignment",
        "Where are variable annotations kept at module level?",
        'module attribute "__annotations__"',
    ),
    # --- pyref: the second draw, on the seven longest pages --------------------------------
    (
        "pyref:specialnames",
        "What is the __format__ hook for?",
        "to produce a “formatted” string representation of an object",
    ),
    (
        "pyref:specialnames",
        "How do I make a class use a custom metaclass?",
        'passing the "metaclass" keyword argument in the class definition line',
    ),
    (
        "pyref:specialnames",
        "What does reversed() use when a class has no __reversed__?",
        "will fall back to using the sequence protocol",
    ),
    (
        "pyref:compound",
        "Why is the name bound by 'except E as e' deleted after the handler?",
        "they form a reference cycle with the stack frame",
    ),
    (
        "pyref:compound",
        "Is _ a keyword in match statements?",
        "is a soft keyword within any pattern",
    ),
    (
        "pyref:compound",
        "What makes a context manager asynchronous?",
        "able to suspend execution in its *enter* and *exit* methods",
    ),
    (
        "pyref:types",
        "Is a new bound method object made every time I look a method up on an instance?",
        "happens each time the attribute is retrieved from the instance",
    ),
    (
        "pyref:types",
        "What kind of object is alist.append?",
        "This is really a different disguise of a built-in function",
    ),
    ("pyref:types", "Why might a module have no __file__?", "may be missing for certain types"),
    ("pyref:formatstrings", "What is the grammar of a replacement field?", "replacement_field ::="),
    (
        "pyref:formatstrings",
        "Show examples of referring to positional and keyword arguments in a template.",
        "References first positional argument",
    ),
    (
        "pyref:string-methods",
        "Does isprintable() treat the space character as printable?",
        "excepting the ASCII space (0x20) which is considered printable",
    ),
    (
        "pyref:string-methods",
        "What does rfind give back when the substring is absent?",
        "Return the highest index in the string where substring",
    ),
    (
        "pyref:string-methods",
        "Which line endings does splitlines() break on?",
        "the boundaries are a superset of *universal newlines*",
    ),
    (
        "pyref:typesseq",
        "How does Python decide whether one list is less than another?",
        "tuples and lists are compared lexicographically",
    ),
    (
        "pyref:typesseq",
        "Why can tuples serve as dictionary keys?",
        'to be used as "dict" keys and stored in "set"',
    ),
    (
        "pyref:typesseq",
        "What state is a list left in when a comparison raises during sort()?",
        "the entire sort operation will fail",
    ),
    (
        "pyref:debugger",
        "How do I make a pdb breakpoint skip its first few hits?",
        "Set the ignore count for the given breakpoint number",
    ),
    (
        "pyref:debugger",
        "Can a breakpoint's command list continue running the program?",
        "You can use breakpoint commands to start your program up again",
    ),
    (
        "pyref:debugger",
        "Does restarting the program inside pdb keep my breakpoints?",
        "History, breakpoints, actions and debugger options are preserved",
    ),
]
