"""What the person is told once, when an agent starts: parts of this setup they could mistake
for the real thing (the demo model, canned search results, a critic that is off)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.config import Settings
from local2.contracts import WEB_SEARCH

if TYPE_CHECKING:
    from local2.graph import Services

MOCK_SEARCH = (
    "Web search uses the mock provider: canned example results, not a real search. "
    "Set `web.search.provider: auto` in web.yaml for real search."
)
CRITIC_OFF_EMBEDDED = (
    "The critic is off with the embedded demo model, which cannot grade answers reliably. "
    "To grade them, set `critic.model` to an Ollama judge (or `critic.grade_embedded: true`)."
)


def startup_notices(
    settings: Settings, services: Services, backend_notice: str | None = None
) -> list[str]:
    notices = [backend_notice] if backend_notice else []
    if WEB_SEARCH in services.tools and settings.web.search.provider == "mock":
        notices.append(MOCK_SEARCH)
    critic = settings.critic
    if (
        services.backend == "embedded"
        and services.critic is None
        and critic.enabled
        and not critic.model
        and not critic.grade_embedded
    ):
        notices.append(CRITIC_OFF_EMBEDDED)
    return notices
