"""The critic: a judge model grades each answer 1-5; grounding checks flag what was never seen.

``make_critic`` returns ``None`` when the critic is switched off, which is how the
graph knows to skip the ``critique`` node's work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from local2.config import CriticSettings


def make_critic(chat_model: BaseChatModel, settings: CriticSettings) -> Critic | None:
    """The critic for these settings, or ``None`` when ``enabled: false``."""
    from local2.critic.judge import Critic

    return Critic(chat_model, settings) if settings.enabled else None


if TYPE_CHECKING:
    from local2.critic.grounding import find_urls as find_urls
    from local2.critic.grounding import grounding_flags as grounding_flags
    from local2.critic.judge import Critic as Critic
    from local2.critic.pairwise import judge_pair as judge_pair
    from local2.critic.parse import Grade as Grade
    from local2.critic.parse import parse_grade as parse_grade
    from local2.critic.parse import strip_thinking as strip_thinking
    from local2.critic.prompt import build_prompt as build_prompt
    from local2.critic.prompt import default_rubric as default_rubric
    from local2.errors import JudgeTimeout as JudgeTimeout
else:
    __getattr__ = lazy_face(__name__, __file__)
