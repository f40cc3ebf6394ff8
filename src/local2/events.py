"""Event subjects: the original message bus survives as the turn's event log."""

QUERY_RECEIVED = "query.received"
QUERY_REJECTED = "query.rejected"
MEMORY_RECALL = "memory.recall"
MEMORY_RECALL_FAILED = "memory.recall_failed"
TOOL_REQUEST = "tool.request"  # + ".<tool>"
TOOL_RESULT = "tool.result"  # + ".<tool>"
TOOL_LOOP_LIMIT = "tool.loop_limit"
TOOL_CALL_REPAIR = "tool.repair"
TOOL_ROUTED = "tool.routed"
# A side-effecting call (or a fetch that could carry private data) waits for the person.
TOOL_APPROVAL_REQUESTED = "tool.approval.requested"
TOOL_APPROVAL_GRANTED = "tool.approval.granted"
TOOL_APPROVAL_DENIED = "tool.approval.denied"
TOOL_FALLBACK = "tool.fallback"  # a provider failed; the next one was asked
TOOL_REPEATED = "tool.repeated"  # an identical call in one turn, answered from the first
TOOL_TEMPLATE_ECHO = "tool.template_echo"  # the model copied the tool template: no call
TOOLS_WITHHELD = (
    "tool.withheld"  # the model only copied the tool instructions: asked again without them
)
ANSWER_FALLBACK = "answer.fallback"  # the model's reply was unusable; an extract replaced it
ANSWER_TRIMMED = "answer.trimmed"  # lines the model copied from a memory/file listing cut
RESPONSE_GENERATION = "response.generation"
ANSWER_DIALOG = "answer.dialog"
CRITIQUE_RESULT = "critique.result"  # with late: true when given after the next question
# The critic gave way to the person's next question: the grade comes later (critique.result).
CRITIQUE_DEFERRED = "critique.deferred"
MEMORY_INGESTED = "memory.ingested"
MEMORY_INGEST_FAILED = "memory.ingest_failed"
MEMORY_SAVED = "memory.saved"
MEMORY_SAVE_FAILED = "memory.save_failed"
FILE_READ = "file.read"
FILE_SEARCH = "file.search"
# Passages of the session's attached documents found for the question (document hits).
DOCUMENTS_RECALL = "documents.recall"
DOCUMENTS_RECALL_FAILED = "documents.recall_failed"
USER_FEEDBACK = "user.feedback"
REWARD_EVENT = "reward.event"
BACKEND_NOTICE = "backend.notice"
# Research mode (docs/architecture.md, "Research").
RESEARCH_PLAN = "research.plan"
RESEARCH_STEP = "research.step"  # {id, status: started|done|failed}
RESEARCH_REPLAN = "research.replan"  # {reason, forbidden}
RESEARCH_ROUND = "research.round"  # {n, gaps}
RESEARCH_REPORT = "research.report"  # {sources, citations, unsupported}
# The person steers a run: a pause for their plan or answer, a say while it runs, follow-ups.
RESEARCH_AWAITING = "research.awaiting_input"  # {waits_for: plan|answer, ...}
RESEARCH_INPUT = "research.input"  # {waits_for, approved | edited | answer | refused}
RESEARCH_STEER = "research.steer"  # {seq, kind, value, effect}
RESEARCH_FOLLOWUP = "research.followup"  # {n, question, missing, from_ledger}
RESEARCH_ANSWER = "research.followup.answer"  # {n, sources, citations, unsupported}
REPLAY_STARTED = "replay.started"  # a replayed turn's clock starts here (t = 0)
# Two respondents answer one question; the judge compares them (docs/architecture.md).
COMPARE_STARTED = "compare.started"
PAIRWISE_RESULT = "pairwise.result"
# Which of a turn's answers the session continues from: a preference or a retry's grade.
HISTORY_SWITCHED = "history.switched"
# The critic graded at or below critic.retry_below: a second attempt is offered.
RETRY_OFFERED = "critique.retry_offered"
RETRY_STARTED = "retry.started"


def tool_request(tool: str) -> str:
    return f"{TOOL_REQUEST}.{tool}"


def tool_result(tool: str) -> str:
    return f"{TOOL_RESULT}.{tool}"
