from ._critic import Critic as Critic
from ._critic import Grade as Grade
from ._critic import build_prompt as build_prompt
from ._critic import default_rubric as default_rubric
from ._critic import find_urls as find_urls
from ._critic import grounding_flags as grounding_flags
from ._critic import make_critic as make_critic
from ._critic import parse_grade as parse_grade
from ._critic import strip_thinking as strip_thinking
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
