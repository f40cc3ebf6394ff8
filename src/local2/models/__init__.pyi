from ._backend import make_chat_model as make_chat_model
from ._cancellable import Cancellation as Cancellation
from ._cancellable import cancellable_invoke as cancellable_invoke
from ._embedded import REPETITION_NOTE as REPETITION_NOTE
from ._ollama_catalog import ModelInfo as ModelInfo
from ._ollama_catalog import canonical as canonical
from ._ollama_catalog import chat_models as chat_models
from ._ollama_catalog import has_model as has_model
from ._ollama_catalog import list_models as list_models
from ._ollama_failures import describe_ollama_error as describe_ollama_error
from ._scripted import ScriptedChatModel as ScriptedChatModel
from ._thinking import message_text as message_text
from ._thinking import thinking_and_answer as thinking_and_answer
from ._toolcalls import CALL_INSTRUCTION as CALL_INSTRUCTION
from ._toolcalls import CALL_TEMPLATE as CALL_TEMPLATE
from ._toolcalls import REPAIR_HEADER as REPAIR_HEADER
from ._toolcalls import REPAIR_TOOLS_LINE as REPAIR_TOOLS_LINE
from ._toolcalls import RESULT_PREFIX as RESULT_PREFIX
from ._toolcalls import TOOLS_HEADER as TOOLS_HEADER
from ._toolcalls import ParsedToolCalls as ParsedToolCalls
from ._toolcalls import parse_tool_calls as parse_tool_calls
from ._toolcalls import prompted_messages as prompted_messages
from ._toolcalls import repair_message as repair_message
from ._toolcalls import validate_args as validate_args

__all__ = [
    "CALL_INSTRUCTION",
    "CALL_TEMPLATE",
    "REPAIR_HEADER",
    "REPAIR_TOOLS_LINE",
    "REPETITION_NOTE",
    "RESULT_PREFIX",
    "TOOLS_HEADER",
    "Cancellation",
    "ModelInfo",
    "ParsedToolCalls",
    "ScriptedChatModel",
    "cancellable_invoke",
    "canonical",
    "chat_models",
    "describe_ollama_error",
    "has_model",
    "list_models",
    "make_chat_model",
    "message_text",
    "parse_tool_calls",
    "prompted_messages",
    "repair_message",
    "thinking_and_answer",
    "validate_args",
]
