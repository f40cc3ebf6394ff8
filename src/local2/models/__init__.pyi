from .backend import make_chat_model as make_chat_model
from .cancellable import Cancellation as Cancellation
from .cancellable import cancellable_invoke as cancellable_invoke
from .embedded import REPETITION_NOTE as REPETITION_NOTE
from .ollama_catalog import ModelInfo as ModelInfo
from .ollama_catalog import canonical as canonical
from .ollama_catalog import chat_models as chat_models
from .ollama_catalog import has_model as has_model
from .ollama_catalog import list_models as list_models
from .ollama_failures import describe_ollama_error as describe_ollama_error
from .prompted_tools import CALL_INSTRUCTION as CALL_INSTRUCTION
from .prompted_tools import CALL_TEMPLATE as CALL_TEMPLATE
from .prompted_tools import RESULT_PREFIX as RESULT_PREFIX
from .prompted_tools import TOOLS_HEADER as TOOLS_HEADER
from .prompted_tools import prompted_messages as prompted_messages
from .scripted import ScriptedChatModel as ScriptedChatModel
from .thinking import message_text as message_text
from .thinking import thinking_and_answer as thinking_and_answer
from .toolcall_args import REPAIR_HEADER as REPAIR_HEADER
from .toolcall_args import REPAIR_TOOLS_LINE as REPAIR_TOOLS_LINE
from .toolcall_args import repair_message as repair_message
from .toolcall_args import validate_args as validate_args
from .toolcall_text import ParsedToolCalls as ParsedToolCalls
from .toolcall_text import parse_tool_calls as parse_tool_calls

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
