"""A report's references as they leave the app (issue 56): BibTeX, RIS and CSL-JSON, built
from the ledger's records (``contracts/sources.py: CitedSource``) by pure functions, with
citation keys that stay the same for the same sources.

- :mod:`.names`: an author's name split for a citation style, a date's parts, the key;
- :mod:`.bibtex`, :mod:`.ris`, :mod:`.csl`: one format each.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.references.bibtex import to_bibtex as to_bibtex
    from local2.references.csl import to_csl as to_csl
    from local2.references.csl import to_csl_json as to_csl_json
    from local2.references.names import citation_keys as citation_keys
    from local2.references.ris import to_ris as to_ris
else:
    __getattr__ = lazy_face(__name__, __file__)
