"""Where a person is told: Apprise URLs (``mailto://``, ``ntfy://``, ``matrix://``,
``slack://``, ``json://`` …), checked when a watch is added and shown only redacted.

``Apprise.instantiate`` parses a URL and builds its plugin without sending anything: a URL
it cannot build is refused here, with examples. What a person, a log, an event or the API
sees of a URL is ``url(privacy=True)``, secrets masked; the parts it masks are the secrets
:func:`scrub` takes out of any text (an error a server sent back).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from apprise import Apprise, AppriseAsset
from apprise.plugins import NotifyBase

from local2.errors import InvalidInput

EXAMPLES = (
    "mailto://user:password@example.com?to=me@example.com, ntfys://ntfy.sh/my-topic, "
    "json://hooks.example.com/local2, matrixs://user:token@matrix.org/#room"
)
MASK = "****"
_PIECE = re.compile(r"[^/:@?&=#%+,;\s]{4,}")  # URL pieces long enough to be a secret


def asset() -> AppriseAsset:
    """Apprise's settings for LoCAL2: secure logging on (it is the default; said here)."""
    return AppriseAsset(secure_logging=True)


def plugin_for(url: str) -> NotifyBase:
    """The Apprise plugin for ``url``, or a clear error with examples (nothing sent)."""
    cleaned = url.strip()
    scheme = cleaned.split("://", 1)[0].lower() if "://" in cleaned else ""
    plugin = Apprise.instantiate(cleaned, asset=asset()) if scheme else None
    if plugin is None:
        if not scheme:
            what = "it has no scheme (like mailto://)"
        elif _is_known(scheme):
            what = f"the {scheme}:// URL is incomplete or malformed"
        else:
            what = f"unknown scheme {scheme}://"
        raise InvalidInput(
            f"Cannot send notices there: {what}.",
            f"Give an Apprise URL, e.g. {EXAMPLES} (docs/watch.md lists the services).",
        )
    return plugin


def _is_known(scheme: str) -> bool:
    """Whether an Apprise plugin reads ``scheme`` (so a refused URL is malformed, not alien)."""
    details = Apprise().details()
    return any(
        scheme in (s.get("protocols") or ()) or scheme in (s.get("secure_protocols") or ())
        for s in details.get("schemas", [])
    )


def shown(plugin: NotifyBase) -> str:
    """The plugin's URL as it may be shown: ``url(privacy=True)`` (no password, no token)."""
    return str(plugin.url(privacy=True))  # type: ignore[no-untyped-call]  # Apprise leaves url() unannotated


def redacted(url: str) -> str:
    """``url`` as it may be shown (:func:`shown`)."""
    return shown(plugin_for(url))


def secrets_of(url: str) -> list[str]:
    """What ``url``'s redacted form hides (its private fields, and any piece of it the
    redacted form leaves out, query keys aside): the text :func:`scrub` masks."""
    plugin = plugin_for(url)
    visible = set(_PIECE.findall(shown(plugin)))
    fields = {**plugin.template_tokens, **plugin.template_args}
    private = {
        value
        for key, spec in fields.items()
        if spec.get("private")
        and isinstance(value := getattr(plugin, spec.get("map_to", key), None), str)
    }
    private |= {quote(value, safe="") for value in private}  # as the URL may spell them
    head, _, query = url.strip().partition("?")
    values = [v for pair in query.split("&") for v in pair.split("=", 1)[1:]]
    hidden = {p for p in _PIECE.findall(" ".join([head, *values])) if p not in visible}
    return sorted({s for s in private | hidden if len(s) >= 4}, key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` with every one of ``secrets`` masked (a server's reply, an exception)."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
