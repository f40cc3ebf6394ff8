"""The per-tab state every part of the chat reads and writes: which session and branch this
browser tab shows, its chat, its answers' query ids, and the sessions this browser used.

Created first in the app's ``gr.Blocks`` and given to the parts that use it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

import gradio as gr


def browser_secret(data_dir: Path) -> str:
    """A per-installation key for what the browser keeps (its sessions, its sources), so it
    survives restarts."""
    path = data_dir / "ui_secret"
    try:
        return path.read_text().strip() or _new_secret(path)
    except OSError:
        return _new_secret(path)


def _new_secret(path: Path) -> str:
    secret = secrets.token_urlsafe(24)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secret)
    except OSError:  # read-only data dir: the list just lasts as long as the server
        pass
    return secret


@dataclass(frozen=True)
class SessionState:
    """The ``gr.State`` components of one browser tab, and its ``gr.BrowserState``."""

    session_id: gr.State
    chat_msgs: gr.State
    query_ids: gr.State  # index of each question in the chat -> its query_id
    branch: gr.State  # checkpoint this tab continues from; None: the head
    my_sessions: gr.BrowserState  # the sessions this browser used, in its localStorage

    @classmethod
    def create(cls, data_dir: Path) -> SessionState:
        """Lay out the state (inside an open ``gr.Blocks``)."""
        return cls(
            session_id=gr.State(None),
            chat_msgs=gr.State([]),
            query_ids=gr.State({}),
            branch=gr.State(None),
            my_sessions=gr.BrowserState(
                [], storage_key="local2-sessions", secret=browser_secret(data_dir)
            ),
        )
