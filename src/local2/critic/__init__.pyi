from ._grounding import find_urls as find_urls
from ._grounding import grounding_flags as grounding_flags
from ._judge import Critic as Critic
from ._judge import Grade as Grade
from ._judge import build_prompt as build_prompt
from ._judge import default_rubric as default_rubric
from ._judge import make_critic as make_critic
from ._judge import parse_grade as parse_grade
from ._judge import strip_thinking as strip_thinking
from ._pairwise import judge_pair as judge_pair

__all__ = [
    "Critic",
    "Grade",
    "build_prompt",
    "default_rubric",
    "find_urls",
    "grounding_flags",
    "judge_pair",
    "make_critic",
    "parse_grade",
    "strip_thinking",
]
