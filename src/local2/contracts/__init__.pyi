from . import approval as approval
from ._documents import DocumentHit as DocumentHit
from ._documents import DocumentPassage as DocumentPassage
from ._documents import DocumentRecord as DocumentRecord
from ._evals import Comparison as Comparison
from ._evals import Diagnosis as Diagnosis
from ._evals import EvalDetail as EvalDetail
from ._evals import EvalMode as EvalMode
from ._evals import EvalProgress as EvalProgress
from ._evals import EvalReport as EvalReport
from ._evals import EvalRunRow as EvalRunRow
from ._evals import EvalRunStart as EvalRunStart
from ._evals import EvidenceItem as EvidenceItem
from ._evals import EvidenceReport as EvidenceReport
from ._evals import GradeName as GradeName
from ._evals import GraderInfo as GraderInfo
from ._evals import QuestionResult as QuestionResult
from ._evals import Rate as Rate
from ._evals import RunManifest as RunManifest
from ._evals import RunSettings as RunSettings
from ._evals import RunState as RunState
from ._evals import RunSummary as RunSummary
from ._evals import Selection as Selection
from ._evals import SetFormat as SetFormat
from ._evals import SetInfo as SetInfo
from ._evals import TokenCounts as TokenCounts
from ._library import Keep as Keep
from ._library import LibraryEntry as LibraryEntry
from ._library import LibraryHit as LibraryHit
from ._library import LibraryPage as LibraryPage
from ._library import Reading as Reading
from ._library import Sources as Sources
from ._people import LOCAL as LOCAL
from ._people import LOCAL_NAME as LOCAL_NAME
from ._people import TEAM_NAME as TEAM_NAME
from ._people import Person as Person
from ._people import may_write_team_facts as may_write_team_facts
from ._records import CompareSpec as CompareSpec
from ._records import Critique as Critique
from ._records import EventEntry as EventEntry
from ._records import MemoryHit as MemoryHit
from ._records import Pairwise as Pairwise
from ._records import PendingCall as PendingCall
from ._records import PendingGrade as PendingGrade
from ._records import Respondent as Respondent
from ._records import RespondentSpec as RespondentSpec
from ._records import RetriedAttempt as RetriedAttempt
from ._records import Retry as Retry
from ._records import RetryAttempt as RetryAttempt
from ._records import Reward as Reward
from ._records import SavedMemory as SavedMemory
from ._records import ToolCallRecord as ToolCallRecord
from ._records import Verdict as Verdict
from ._research import Clarification as Clarification
from ._research import ClarifyRequest as ClarifyRequest
from ._research import Followup as Followup
from ._research import NoSources as NoSources
from ._research import PendingInput as PendingInput
from ._research import PlanAttempt as PlanAttempt
from ._research import PlannedStep as PlannedStep
from ._research import PlanRecord as PlanRecord
from ._research import ResearchCall as ResearchCall
from ._research import ResearchPayload as ResearchPayload
from ._research import ResearchRequest as ResearchRequest
from ._research import ResearchRun as ResearchRun
from ._research import ResearchSource as ResearchSource
from ._research import ResearchStep as ResearchStep
from ._research import RoundRecord as RoundRecord
from ._research import RunItem as RunItem
from ._research import RunSourcing as RunSourcing
from ._research import RunStatus as RunStatus
from ._research import ShownStep as ShownStep
from ._research import SteerRecord as SteerRecord
from ._research import SubQuestion as SubQuestion
from ._research import SubQuestionView as SubQuestionView
from ._research import UnsupportedSentence as UnsupportedSentence
from ._research_input import STOP_RUN as STOP_RUN
from ._research_input import PlanEdit as PlanEdit
from ._research_input import ResearchInput as ResearchInput
from ._research_input import Steer as Steer
from ._research_input import SubQuestionEdit as SubQuestionEdit
from ._research_input import WaitsFor as WaitsFor
from ._search import SearchHit as SearchHit
from ._search import SearchHits as SearchHits
from ._search import SearchSource as SearchSource
from ._search import Why as Why
from ._sources import BINARY_FORMATS as BINARY_FORMATS
from ._sources import EXPORT_FORMATS as EXPORT_FORMATS
from ._sources import REPORT_FORMATS as REPORT_FORMATS
from ._sources import SOURCE_KINDS as SOURCE_KINDS
from ._sources import CitedSource as CitedSource
from ._sources import RunScope as RunScope
from ._sources import SourceKind as SourceKind
from ._sources import SourceMeta as SourceMeta
from ._sources import web_meta as web_meta
from ._stream import EvalItem as EvalItem
from ._stream import ResearchItem as ResearchItem
from ._stream import StreamItem as StreamItem
from ._stream import collect as collect
from ._stream import collect_research as collect_research
from ._stream import collect_turn as collect_turn
from ._tool_names import BUILT_IN as BUILT_IN
from ._tool_names import DIRECTORY_TREE as DIRECTORY_TREE
from ._tool_names import FILE_METADATA as FILE_METADATA
from ._tool_names import GREP_FILES as GREP_FILES
from ._tool_names import LIST_FILES as LIST_FILES
from ._tool_names import READ_FILE as READ_FILE
from ._tool_names import RECALL_MEMORY as RECALL_MEMORY
from ._tool_names import SAVE_MEMORY as SAVE_MEMORY
from ._tool_names import SEARCH_FILES as SEARCH_FILES
from ._tool_names import SEARCH_LIBRARY as SEARCH_LIBRARY
from ._tool_names import WEB_FETCH as WEB_FETCH
from ._tool_names import WEB_SEARCH as WEB_SEARCH
from ._turn import NO_OPTIONS as NO_OPTIONS
from ._turn import AgentInfo as AgentInfo
from ._turn import ApprovalWait as ApprovalWait
from ._turn import AttemptShown as AttemptShown
from ._turn import AuditRun as AuditRun
from ._turn import CheckpointRow as CheckpointRow
from ._turn import CheckpointTurn as CheckpointTurn
from ._turn import FeedbackResult as FeedbackResult
from ._turn import FirstAttempt as FirstAttempt
from ._turn import Grade as Grade
from ._turn import HistoryTurn as HistoryTurn
from ._turn import OriginalTurn as OriginalTurn
from ._turn import PairwiseVerdict as PairwiseVerdict
from ._turn import RespondentAnswer as RespondentAnswer
from ._turn import RetryAttempts as RetryAttempts
from ._turn import SessionHistory as SessionHistory
from ._turn import SessionSummary as SessionSummary
from ._turn import ToolCall as ToolCall
from ._turn import TurnOptions as TurnOptions
from ._turn import TurnPayload as TurnPayload
from ._turn import TurnRecord as TurnRecord
from ._watch import ClaimChange as ClaimChange
from ._watch import ClaimRevised as ClaimRevised
from ._watch import ClaimWithdrawn as ClaimWithdrawn
from ._watch import DeliveryView as DeliveryView
from ._watch import NoticeView as NoticeView
from ._watch import SourceChange as SourceChange
from ._watch import WatchDetail as WatchDetail
from ._watch import WatchRunView as WatchRunView
from ._watch import WatchView as WatchView
from ._watch import WhatChanged as WhatChanged
from .approval import DENIED as DENIED
from .approval import ApprovalAnswer as ApprovalAnswer
from .approval import ApprovalRequest as ApprovalRequest
from .approval import Approver as Approver
from .approval import Decision as Decision
from .approval import PendingApproval as PendingApproval
from .approval import Preceding as Preceding
from .approval import WaitingCall as WaitingCall
from .approval import denial_error as denial_error
from .approval import denial_text as denial_text
from .approval import nobody as nobody
from .approval import terminal_approver as terminal_approver

__all__ = [
    "BINARY_FORMATS",
    "BUILT_IN",
    "DENIED",
    "DIRECTORY_TREE",
    "EXPORT_FORMATS",
    "FILE_METADATA",
    "GREP_FILES",
    "LIST_FILES",
    "LOCAL",
    "LOCAL_NAME",
    "NO_OPTIONS",
    "READ_FILE",
    "RECALL_MEMORY",
    "REPORT_FORMATS",
    "SAVE_MEMORY",
    "SEARCH_FILES",
    "SEARCH_LIBRARY",
    "SOURCE_KINDS",
    "STOP_RUN",
    "TEAM_NAME",
    "WEB_FETCH",
    "WEB_SEARCH",
    "AgentInfo",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApprovalWait",
    "Approver",
    "AttemptShown",
    "AuditRun",
    "CheckpointRow",
    "CheckpointTurn",
    "CitedSource",
    "ClaimChange",
    "ClaimRevised",
    "ClaimWithdrawn",
    "Clarification",
    "ClarifyRequest",
    "CompareSpec",
    "Comparison",
    "Critique",
    "Decision",
    "DeliveryView",
    "Diagnosis",
    "DocumentHit",
    "DocumentPassage",
    "DocumentRecord",
    "EvalDetail",
    "EvalItem",
    "EvalMode",
    "EvalProgress",
    "EvalReport",
    "EvalRunRow",
    "EvalRunStart",
    "EventEntry",
    "EvidenceItem",
    "EvidenceReport",
    "FeedbackResult",
    "FirstAttempt",
    "Followup",
    "Grade",
    "GradeName",
    "GraderInfo",
    "HistoryTurn",
    "Keep",
    "LibraryEntry",
    "LibraryHit",
    "LibraryPage",
    "MemoryHit",
    "NoSources",
    "NoticeView",
    "OriginalTurn",
    "Pairwise",
    "PairwiseVerdict",
    "PendingApproval",
    "PendingCall",
    "PendingGrade",
    "PendingInput",
    "Person",
    "PlanAttempt",
    "PlanEdit",
    "PlanRecord",
    "PlannedStep",
    "Preceding",
    "QuestionResult",
    "Rate",
    "Reading",
    "ResearchCall",
    "ResearchInput",
    "ResearchItem",
    "ResearchPayload",
    "ResearchRequest",
    "ResearchRun",
    "ResearchSource",
    "ResearchStep",
    "Respondent",
    "RespondentAnswer",
    "RespondentSpec",
    "RetriedAttempt",
    "Retry",
    "RetryAttempt",
    "RetryAttempts",
    "Reward",
    "RoundRecord",
    "RunItem",
    "RunManifest",
    "RunScope",
    "RunSettings",
    "RunSourcing",
    "RunState",
    "RunStatus",
    "RunSummary",
    "SavedMemory",
    "SearchHit",
    "SearchHits",
    "SearchSource",
    "Selection",
    "SessionHistory",
    "SessionSummary",
    "SetFormat",
    "SetInfo",
    "ShownStep",
    "SourceChange",
    "SourceKind",
    "SourceMeta",
    "Sources",
    "Steer",
    "SteerRecord",
    "StreamItem",
    "SubQuestion",
    "SubQuestionEdit",
    "SubQuestionView",
    "TokenCounts",
    "ToolCall",
    "ToolCallRecord",
    "TurnOptions",
    "TurnPayload",
    "TurnRecord",
    "UnsupportedSentence",
    "Verdict",
    "WaitingCall",
    "WaitsFor",
    "WatchDetail",
    "WatchRunView",
    "WatchView",
    "WhatChanged",
    "Why",
    "approval",
    "collect",
    "collect_research",
    "collect_turn",
    "denial_error",
    "denial_text",
    "may_write_team_facts",
    "nobody",
    "terminal_approver",
    "web_meta",
]
