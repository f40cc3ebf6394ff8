from .grounding import find_urls as find_urls
from .grounding import grounding_flags as grounding_flags
from .judge import Critic as Critic
from .judge import make_critic as make_critic
from .pairwise import judge_pair as judge_pair
from .parse import Grade as Grade
from .parse import parse_grade as parse_grade
from .parse import strip_thinking as strip_thinking
from .prompt import build_prompt as build_prompt
from .prompt import default_rubric as default_rubric

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
