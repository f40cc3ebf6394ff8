"""A report's references as they leave the app (issue 56): BibTeX, RIS and CSL-JSON, built
from the ledger's records (``contracts/_sources.py: CitedSource``) by pure functions, with
citation keys that stay the same for the same sources.

- :mod:`._names`: an author's name split for a citation style, a date's parts, the key;
- :mod:`._bibtex`, :mod:`._ris`, :mod:`._csl`: one format each;
- :mod:`._report` (HTML), :mod:`._report_pdf`, :mod:`._report_docx`: the report itself, its
  citations linked to its References, from one reading of its Markdown.
"""

from local2.references._bibtex import to_bibtex
from local2.references._csl import to_csl, to_csl_json
from local2.references._names import citation_keys
from local2.references._report import to_html
from local2.references._report_docx import to_docx
from local2.references._report_pdf import to_pdf
from local2.references._ris import to_ris

__all__ = [
    "citation_keys",
    "to_bibtex",
    "to_csl",
    "to_csl_json",
    "to_docx",
    "to_html",
    "to_pdf",
    "to_ris",
]
