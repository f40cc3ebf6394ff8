from ._grounding import find_urls as find_urls
from ._grounding import grounding_flags as grounding_flags
from ._judge import Critic as Critic
from ._judge import make_critic as make_critic
from ._pairwise import judge_pair as judge_pair
from ._parse import Grade as Grade
from ._parse import parse_grade as parse_grade
from ._parse import strip_thinking as strip_thinking
from ._prompt import build_prompt as build_prompt
from ._prompt import default_rubric as default_rubric

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
