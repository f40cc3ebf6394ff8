"""The critic: a judge model grades each answer 1-5; grounding checks flag what was never seen.

``make_critic`` returns ``None`` when the critic is switched off, which is how the
graph knows to skip the ``critique`` node's work.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from local2.config.schema import CriticSettings
from local2.critic.grounding import grounding_flags
from local2.critic.judge import Critic
from local2.critic.parse import Grade, parse_grade, strip_thinking
from local2.critic.prompt import build_prompt, default_rubric
from local2.errors import JudgeTimeout
from local2.faces import lazy_face


def make_critic(chat_model: BaseChatModel, settings: CriticSettings) -> Critic | None:
    """The critic for these settings, or ``None`` when ``enabled: false``."""
    return Critic(chat_model, settings) if settings.enabled else None


__all__ = [
    "Critic",
    "Grade",
    "JudgeTimeout",
    "build_prompt",
    "default_rubric",
    "grounding_flags",
    "judge_pair",
    "make_critic",
    "parse_grade",
    "strip_thinking",
]

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "judge_pair": "local2.critic.pairwise",
}
__getattr__ = lazy_face(__name__, _FACE)
