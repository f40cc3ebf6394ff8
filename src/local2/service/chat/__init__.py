"""The chat feature of the service: turns (start, stream, stop), the sessions they leave,
time travel, tool calls that wait for the person, ratings, retries and the grades that gave
way to a next question. Its modules are its own (``_turns.py``...); this face is what the
rest of the service uses."""

from local2.service.chat._approvals import Approvals as Approvals
from local2.service.chat._background import BackgroundTurn as BackgroundTurn
from local2.service.chat._late_grades import LateGrades as LateGrades
from local2.service.chat._ratings import Ratings as Ratings
from local2.service.chat._retries import Retries as Retries
from local2.service.chat._running import GraphRuns as GraphRuns
from local2.service.chat._running import Turns as Turns
from local2.service.chat._sessions import SessionReader as SessionReader
from local2.service.chat._sessions import checkpoint_id as checkpoint_id
from local2.service.chat._timetravel import TimeTravel as TimeTravel
from local2.service.chat._turns import TurnRunner as TurnRunner
from local2.service.chat._turns import turn_options as turn_options

__all__ = [
    "Approvals",
    "BackgroundTurn",
    "GraphRuns",
    "LateGrades",
    "Ratings",
    "Retries",
    "SessionReader",
    "TimeTravel",
    "TurnRunner",
    "Turns",
    "checkpoint_id",
    "turn_options",
]
