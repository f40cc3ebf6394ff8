"""The typed contracts every layer shares: records a turn keeps, the payloads it returns,
the items its stream hands out, and the approval protocol.

- :mod:`.records`: a tool call, a memory hit, an event entry, a grade (the state's records);
- :mod:`.turn`: the turn payload and what the session endpoints return;
- :mod:`.research`: the research payload;
- :mod:`.watch`: what a watch's run found changed, and watches as a person sees them;
- :mod:`.sources`: what a citation needs to know about a source (its bibliographic record);
- :mod:`.stream`: the literal kinds of stream items;
- :mod:`.approval`: what a paused turn asks the person, and the answers it accepts;
- :mod:`.tool_names`: the built-in tools' names.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.contracts import approval as approval
    from local2.contracts.approval import DENIED as DENIED
    from local2.contracts.approval import ApprovalAnswer as ApprovalAnswer
    from local2.contracts.approval import ApprovalRequest as ApprovalRequest
    from local2.contracts.approval import Approver as Approver
    from local2.contracts.approval import Decision as Decision
    from local2.contracts.approval import PendingApproval as PendingApproval
    from local2.contracts.approval import Preceding as Preceding
    from local2.contracts.approval import WaitingCall as WaitingCall
    from local2.contracts.approval import denial_error as denial_error
    from local2.contracts.approval import denial_text as denial_text
    from local2.contracts.approval import nobody as nobody
    from local2.contracts.approval import terminal_approver as terminal_approver
    from local2.contracts.documents import DocumentHit as DocumentHit
    from local2.contracts.documents import DocumentPassage as DocumentPassage
    from local2.contracts.documents import DocumentRecord as DocumentRecord
    from local2.contracts.evals import Comparison as Comparison
    from local2.contracts.evals import Diagnosis as Diagnosis
    from local2.contracts.evals import EvalDetail as EvalDetail
    from local2.contracts.evals import EvalMode as EvalMode
    from local2.contracts.evals import EvalProgress as EvalProgress
    from local2.contracts.evals import EvalReport as EvalReport
    from local2.contracts.evals import EvalRunRow as EvalRunRow
    from local2.contracts.evals import EvalRunStart as EvalRunStart
    from local2.contracts.evals import EvidenceItem as EvidenceItem
    from local2.contracts.evals import EvidenceReport as EvidenceReport
    from local2.contracts.evals import GradeName as GradeName
    from local2.contracts.evals import GraderInfo as GraderInfo
    from local2.contracts.evals import QuestionResult as QuestionResult
    from local2.contracts.evals import Rate as Rate
    from local2.contracts.evals import RunManifest as RunManifest
    from local2.contracts.evals import RunSettings as RunSettings
    from local2.contracts.evals import RunState as RunState
    from local2.contracts.evals import RunSummary as RunSummary
    from local2.contracts.evals import Selection as Selection
    from local2.contracts.evals import SetFormat as SetFormat
    from local2.contracts.evals import SetInfo as SetInfo
    from local2.contracts.evals import TokenCounts as TokenCounts
    from local2.contracts.library import Keep as Keep
    from local2.contracts.library import LibraryEntry as LibraryEntry
    from local2.contracts.library import LibraryHit as LibraryHit
    from local2.contracts.library import LibraryPage as LibraryPage
    from local2.contracts.library import Reading as Reading
    from local2.contracts.library import Sources as Sources
    from local2.contracts.people import LOCAL as LOCAL
    from local2.contracts.people import LOCAL_NAME as LOCAL_NAME
    from local2.contracts.people import TEAM_NAME as TEAM_NAME
    from local2.contracts.people import Person as Person
    from local2.contracts.people import may_write_team_facts as may_write_team_facts
    from local2.contracts.records import CompareSpec as CompareSpec
    from local2.contracts.records import Critique as Critique
    from local2.contracts.records import EventEntry as EventEntry
    from local2.contracts.records import MemoryHit as MemoryHit
    from local2.contracts.records import Pairwise as Pairwise
    from local2.contracts.records import PendingCall as PendingCall
    from local2.contracts.records import PendingGrade as PendingGrade
    from local2.contracts.records import Respondent as Respondent
    from local2.contracts.records import RespondentSpec as RespondentSpec
    from local2.contracts.records import RetriedAttempt as RetriedAttempt
    from local2.contracts.records import Retry as Retry
    from local2.contracts.records import RetryAttempt as RetryAttempt
    from local2.contracts.records import Reward as Reward
    from local2.contracts.records import SavedMemory as SavedMemory
    from local2.contracts.records import ToolCallRecord as ToolCallRecord
    from local2.contracts.records import Verdict as Verdict
    from local2.contracts.research import Clarification as Clarification
    from local2.contracts.research import ClarifyRequest as ClarifyRequest
    from local2.contracts.research import Followup as Followup
    from local2.contracts.research import NoSources as NoSources
    from local2.contracts.research import PendingInput as PendingInput
    from local2.contracts.research import PlanAttempt as PlanAttempt
    from local2.contracts.research import PlannedStep as PlannedStep
    from local2.contracts.research import PlanRecord as PlanRecord
    from local2.contracts.research import ResearchCall as ResearchCall
    from local2.contracts.research import ResearchPayload as ResearchPayload
    from local2.contracts.research import ResearchRequest as ResearchRequest
    from local2.contracts.research import ResearchRun as ResearchRun
    from local2.contracts.research import ResearchSource as ResearchSource
    from local2.contracts.research import ResearchStep as ResearchStep
    from local2.contracts.research import RoundRecord as RoundRecord
    from local2.contracts.research import RunItem as RunItem
    from local2.contracts.research import RunSourcing as RunSourcing
    from local2.contracts.research import RunStatus as RunStatus
    from local2.contracts.research import ShownStep as ShownStep
    from local2.contracts.research import SteerRecord as SteerRecord
    from local2.contracts.research import SubQuestion as SubQuestion
    from local2.contracts.research import SubQuestionView as SubQuestionView
    from local2.contracts.research import UnsupportedSentence as UnsupportedSentence
    from local2.contracts.research_input import STOP_RUN as STOP_RUN
    from local2.contracts.research_input import PlanEdit as PlanEdit
    from local2.contracts.research_input import ResearchInput as ResearchInput
    from local2.contracts.research_input import Steer as Steer
    from local2.contracts.research_input import SubQuestionEdit as SubQuestionEdit
    from local2.contracts.research_input import WaitsFor as WaitsFor
    from local2.contracts.search import SearchHit as SearchHit
    from local2.contracts.search import SearchHits as SearchHits
    from local2.contracts.search import SearchSource as SearchSource
    from local2.contracts.search import Why as Why
    from local2.contracts.sources import SOURCE_KINDS as SOURCE_KINDS
    from local2.contracts.sources import CitedSource as CitedSource
    from local2.contracts.sources import SourceKind as SourceKind
    from local2.contracts.sources import SourceMeta as SourceMeta
    from local2.contracts.sources import web_meta as web_meta
    from local2.contracts.stream import EvalItem as EvalItem
    from local2.contracts.stream import ResearchItem as ResearchItem
    from local2.contracts.stream import StreamItem as StreamItem
    from local2.contracts.stream import collect as collect
    from local2.contracts.stream import collect_research as collect_research
    from local2.contracts.stream import collect_turn as collect_turn
    from local2.contracts.tool_names import BUILT_IN as BUILT_IN
    from local2.contracts.tool_names import DIRECTORY_TREE as DIRECTORY_TREE
    from local2.contracts.tool_names import FILE_METADATA as FILE_METADATA
    from local2.contracts.tool_names import GREP_FILES as GREP_FILES
    from local2.contracts.tool_names import LIST_FILES as LIST_FILES
    from local2.contracts.tool_names import READ_FILE as READ_FILE
    from local2.contracts.tool_names import RECALL_MEMORY as RECALL_MEMORY
    from local2.contracts.tool_names import SAVE_MEMORY as SAVE_MEMORY
    from local2.contracts.tool_names import SEARCH_FILES as SEARCH_FILES
    from local2.contracts.tool_names import SEARCH_LIBRARY as SEARCH_LIBRARY
    from local2.contracts.tool_names import WEB_FETCH as WEB_FETCH
    from local2.contracts.tool_names import WEB_SEARCH as WEB_SEARCH
    from local2.contracts.turn import NO_OPTIONS as NO_OPTIONS
    from local2.contracts.turn import AgentInfo as AgentInfo
    from local2.contracts.turn import ApprovalWait as ApprovalWait
    from local2.contracts.turn import AttemptShown as AttemptShown
    from local2.contracts.turn import AuditRun as AuditRun
    from local2.contracts.turn import CheckpointRow as CheckpointRow
    from local2.contracts.turn import CheckpointTurn as CheckpointTurn
    from local2.contracts.turn import FeedbackResult as FeedbackResult
    from local2.contracts.turn import FirstAttempt as FirstAttempt
    from local2.contracts.turn import Grade as Grade
    from local2.contracts.turn import HistoryTurn as HistoryTurn
    from local2.contracts.turn import OriginalTurn as OriginalTurn
    from local2.contracts.turn import PairwiseVerdict as PairwiseVerdict
    from local2.contracts.turn import RespondentAnswer as RespondentAnswer
    from local2.contracts.turn import RetryAttempts as RetryAttempts
    from local2.contracts.turn import SessionHistory as SessionHistory
    from local2.contracts.turn import SessionSummary as SessionSummary
    from local2.contracts.turn import ToolCall as ToolCall
    from local2.contracts.turn import TurnOptions as TurnOptions
    from local2.contracts.turn import TurnPayload as TurnPayload
    from local2.contracts.turn import TurnRecord as TurnRecord
    from local2.contracts.watch import ClaimChange as ClaimChange
    from local2.contracts.watch import ClaimRevised as ClaimRevised
    from local2.contracts.watch import ClaimWithdrawn as ClaimWithdrawn
    from local2.contracts.watch import DeliveryView as DeliveryView
    from local2.contracts.watch import NoticeView as NoticeView
    from local2.contracts.watch import SourceChange as SourceChange
    from local2.contracts.watch import WatchDetail as WatchDetail
    from local2.contracts.watch import WatchRunView as WatchRunView
    from local2.contracts.watch import WatchView as WatchView
    from local2.contracts.watch import WhatChanged as WhatChanged
else:
    __getattr__ = lazy_face(__name__, __file__)
