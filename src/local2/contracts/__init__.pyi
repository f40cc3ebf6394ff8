from . import approval as approval
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
from .documents import DocumentHit as DocumentHit
from .documents import DocumentPassage as DocumentPassage
from .documents import DocumentRecord as DocumentRecord
from .evals import Comparison as Comparison
from .evals import Diagnosis as Diagnosis
from .evals import EvalDetail as EvalDetail
from .evals import EvalMode as EvalMode
from .evals import EvalProgress as EvalProgress
from .evals import EvalReport as EvalReport
from .evals import EvalRunRow as EvalRunRow
from .evals import EvalRunStart as EvalRunStart
from .evals import EvidenceItem as EvidenceItem
from .evals import EvidenceReport as EvidenceReport
from .evals import GradeName as GradeName
from .evals import GraderInfo as GraderInfo
from .evals import QuestionResult as QuestionResult
from .evals import Rate as Rate
from .evals import RunManifest as RunManifest
from .evals import RunSettings as RunSettings
from .evals import RunState as RunState
from .evals import RunSummary as RunSummary
from .evals import Selection as Selection
from .evals import SetFormat as SetFormat
from .evals import SetInfo as SetInfo
from .evals import TokenCounts as TokenCounts
from .library import Keep as Keep
from .library import LibraryEntry as LibraryEntry
from .library import LibraryHit as LibraryHit
from .library import LibraryPage as LibraryPage
from .library import Reading as Reading
from .library import Sources as Sources
from .people import LOCAL as LOCAL
from .people import LOCAL_NAME as LOCAL_NAME
from .people import TEAM_NAME as TEAM_NAME
from .people import Person as Person
from .people import may_write_team_facts as may_write_team_facts
from .records import CompareSpec as CompareSpec
from .records import Critique as Critique
from .records import EventEntry as EventEntry
from .records import MemoryHit as MemoryHit
from .records import Pairwise as Pairwise
from .records import PendingCall as PendingCall
from .records import PendingGrade as PendingGrade
from .records import Respondent as Respondent
from .records import RespondentSpec as RespondentSpec
from .records import RetriedAttempt as RetriedAttempt
from .records import Retry as Retry
from .records import RetryAttempt as RetryAttempt
from .records import Reward as Reward
from .records import SavedMemory as SavedMemory
from .records import ToolCallRecord as ToolCallRecord
from .records import Verdict as Verdict
from .research import Clarification as Clarification
from .research import ClarifyRequest as ClarifyRequest
from .research import Followup as Followup
from .research import NoSources as NoSources
from .research import PendingInput as PendingInput
from .research import PlanAttempt as PlanAttempt
from .research import PlannedStep as PlannedStep
from .research import PlanRecord as PlanRecord
from .research import ResearchCall as ResearchCall
from .research import ResearchPayload as ResearchPayload
from .research import ResearchRequest as ResearchRequest
from .research import ResearchRun as ResearchRun
from .research import ResearchSource as ResearchSource
from .research import ResearchStep as ResearchStep
from .research import RoundRecord as RoundRecord
from .research import RunItem as RunItem
from .research import RunSourcing as RunSourcing
from .research import RunStatus as RunStatus
from .research import ShownStep as ShownStep
from .research import SteerRecord as SteerRecord
from .research import SubQuestion as SubQuestion
from .research import SubQuestionView as SubQuestionView
from .research import UnsupportedSentence as UnsupportedSentence
from .research_input import STOP_RUN as STOP_RUN
from .research_input import PlanEdit as PlanEdit
from .research_input import ResearchInput as ResearchInput
from .research_input import Steer as Steer
from .research_input import SubQuestionEdit as SubQuestionEdit
from .research_input import WaitsFor as WaitsFor
from .search import SearchHit as SearchHit
from .search import SearchHits as SearchHits
from .search import SearchSource as SearchSource
from .search import Why as Why
from .sources import SOURCE_KINDS as SOURCE_KINDS
from .sources import CitedSource as CitedSource
from .sources import SourceKind as SourceKind
from .sources import SourceMeta as SourceMeta
from .sources import web_meta as web_meta
from .stream import EvalItem as EvalItem
from .stream import ResearchItem as ResearchItem
from .stream import StreamItem as StreamItem
from .stream import collect as collect
from .stream import collect_research as collect_research
from .stream import collect_turn as collect_turn
from .tool_names import BUILT_IN as BUILT_IN
from .tool_names import DIRECTORY_TREE as DIRECTORY_TREE
from .tool_names import FILE_METADATA as FILE_METADATA
from .tool_names import GREP_FILES as GREP_FILES
from .tool_names import LIST_FILES as LIST_FILES
from .tool_names import READ_FILE as READ_FILE
from .tool_names import RECALL_MEMORY as RECALL_MEMORY
from .tool_names import SAVE_MEMORY as SAVE_MEMORY
from .tool_names import SEARCH_FILES as SEARCH_FILES
from .tool_names import SEARCH_LIBRARY as SEARCH_LIBRARY
from .tool_names import WEB_FETCH as WEB_FETCH
from .tool_names import WEB_SEARCH as WEB_SEARCH
from .turn import NO_OPTIONS as NO_OPTIONS
from .turn import AgentInfo as AgentInfo
from .turn import ApprovalWait as ApprovalWait
from .turn import AttemptShown as AttemptShown
from .turn import AuditRun as AuditRun
from .turn import CheckpointRow as CheckpointRow
from .turn import CheckpointTurn as CheckpointTurn
from .turn import FeedbackResult as FeedbackResult
from .turn import FirstAttempt as FirstAttempt
from .turn import Grade as Grade
from .turn import HistoryTurn as HistoryTurn
from .turn import OriginalTurn as OriginalTurn
from .turn import PairwiseVerdict as PairwiseVerdict
from .turn import RespondentAnswer as RespondentAnswer
from .turn import RetryAttempts as RetryAttempts
from .turn import SessionHistory as SessionHistory
from .turn import SessionSummary as SessionSummary
from .turn import ToolCall as ToolCall
from .turn import TurnOptions as TurnOptions
from .turn import TurnPayload as TurnPayload
from .turn import TurnRecord as TurnRecord
from .watch import ClaimChange as ClaimChange
from .watch import ClaimRevised as ClaimRevised
from .watch import ClaimWithdrawn as ClaimWithdrawn
from .watch import DeliveryView as DeliveryView
from .watch import NoticeView as NoticeView
from .watch import SourceChange as SourceChange
from .watch import WatchDetail as WatchDetail
from .watch import WatchRunView as WatchRunView
from .watch import WatchView as WatchView
from .watch import WhatChanged as WhatChanged

__all__ = [
    "BUILT_IN",
    "DENIED",
    "DIRECTORY_TREE",
    "FILE_METADATA",
    "GREP_FILES",
    "LIST_FILES",
    "LOCAL",
    "LOCAL_NAME",
    "NO_OPTIONS",
    "READ_FILE",
    "RECALL_MEMORY",
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
