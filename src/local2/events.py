"""Event subjects: the original message bus survives as the turn's event log."""

QUERY_RECEIVED = "query.received"
QUERY_REJECTED = "query.rejected"
MEMORY_RECALL = "memory.recall"
TOOL_REQUEST = "tool.request"  # + ".<tool>"
TOOL_RESULT = "tool.result"  # + ".<tool>"
TOOL_LOOP_LIMIT = "tool.loop_limit"
TOOL_CALL_REPAIR = "tool.repair"
TOOL_ROUTED = "tool.routed"
# A side-effecting call (or a fetch that could carry private data) waits for the person.
TOOL_APPROVAL_REQUESTED = "tool.approval.requested"
TOOL_APPROVAL_GRANTED = "tool.approval.granted"
TOOL_APPROVAL_DENIED = "tool.approval.denied"
RESPONSE_GENERATION = "response.generation"
ANSWER_DIALOG = "answer.dialog"
CRITIQUE_RESULT = "critique.result"
MEMORY_INGESTED = "memory.ingested"
MEMORY_INGEST_FAILED = "memory.ingest_failed"
MEMORY_SAVED = "memory.saved"
FILE_READ = "file.read"
FILE_SEARCH = "file.search"
USER_FEEDBACK = "user.feedback"
REWARD_EVENT = "reward.event"
BACKEND_NOTICE = "backend.notice"
REPLAY_STARTED = "replay.started"  # a replayed turn's clock starts here (t = 0)


def tool_request(tool: str) -> str:
    return f"{TOOL_REQUEST}.{tool}"


def tool_result(tool: str) -> str:
    return f"{TOOL_RESULT}.{tool}"
