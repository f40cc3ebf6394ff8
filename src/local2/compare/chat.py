"""``local2 chat``'s own commands for compare and retry turns: /prefer, /retry, /show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HELP = "/prefer a|b|tie after a compared answer · /retry after a low grade · /show 1|2"


def chat_command(
    agent: Any,
    line: str,
    session_id: str,
    last: dict[str, Any],
    on_item: Callable[[str, Any], None],
    approve: Any = None,
) -> bool:
    """Handle ``line`` if it is one of these commands (about the ``last`` turn); True if so."""
    from local2.cli import err
    from local2.compare import session

    words = line.strip().split()
    if not words or words[0] not in ("/prefer", "/retry", "/show"):
        return False
    query_id = last.get("query_id")
    if not query_id:
        err.print("[yellow]Ask something first.[/]")
        return True
    try:
        if words[0] == "/prefer":
            choice = words[1] if len(words) > 1 else ""
            result = session.prefer(agent, session_id, query_id, choice)
            err.print(
                f"[dim]Noted: {choice}. The conversation continues from "
                f"{(result['continues'] or 'the answer shown').upper()}.[/]"
            )
        elif words[0] == "/show":
            attempt = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
            session.show(agent, session_id, query_id, attempt)
            err.print(f"[dim]The conversation continues from attempt {attempt}.[/]")
        else:
            for kind, data in session.retry(agent, session_id, query_id, approve):
                on_item(kind, data)
                if kind == "final":
                    last.clear()
                    last.update(data)
    except (ValueError, LookupError) as exc:
        err.print(f"[red]{exc}[/]  [dim]({HELP})[/]")
    return True
