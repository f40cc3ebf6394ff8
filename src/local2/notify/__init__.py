"""Telling a person (a part: docs/architecture.md): Apprise targets checked and shown
redacted, a notice sent with retries and a record per attempt, a person's Atom feed.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.notify.feed import FeedEntry as FeedEntry
    from local2.notify.feed import atom_feed as atom_feed
    from local2.notify.sending import Attempt as Attempt
    from local2.notify.sending import Backoff as Backoff
    from local2.notify.sending import deliver as deliver
    from local2.notify.targets import plugin_for as plugin_for
    from local2.notify.targets import redacted as redacted
    from local2.notify.targets import scrub as scrub
    from local2.notify.targets import secrets_of as secrets_of
    from local2.notify.targets import shown as shown
else:
    __getattr__ = lazy_face(__name__, __file__)
