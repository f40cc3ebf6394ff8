"""Parsing the XML inside documents, which is untrusted: no entities, DTDs or network.

libxml2 also keeps its default depth and size limits (``huge_tree`` off), so a document
nested thousands deep is refused as corrupt instead of parsed.
"""

from __future__ import annotations

from lxml import etree

from local2.documents._model import Format
from local2.documents._problems import corrupt

_PARSER = etree.XMLParser(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    huge_tree=False,
    remove_comments=True,
    remove_pis=True,
)


def parse(data: bytes, fmt: Format, name: str) -> etree._Element:
    """The root element of ``data``; a :func:`corrupt` error naming the part if it is not XML."""
    try:
        return etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise corrupt(fmt, f"{name}: {exc}") from None


def local(tag: object) -> str:
    """An element's name without its namespace (``{urn:...}p`` -> ``p``); '' for comments."""
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def dc_title(root: etree._Element) -> str:
    """The first Dublin Core title in a metadata part (docProps/core.xml, meta.xml, OPF)."""
    found = root.find(".//{http://purl.org/dc/elements/1.1/}title")
    return " ".join((found.text or "").split()) if found is not None else ""
