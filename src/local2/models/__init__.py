"""Model backends and what small models write: text tool calls and the keyword router."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.models.backend import make_chat_model as make_chat_model
    from local2.models.cancellable import Cancellation as Cancellation
    from local2.models.cancellable import cancellable_invoke as cancellable_invoke
    from local2.models.embedded import REPETITION_NOTE as REPETITION_NOTE
    from local2.models.ollama_catalog import ModelInfo as ModelInfo
    from local2.models.ollama_catalog import canonical as canonical
    from local2.models.ollama_catalog import chat_models as chat_models
    from local2.models.ollama_catalog import has_model as has_model
    from local2.models.ollama_catalog import list_models as list_models
    from local2.models.ollama_failures import describe_ollama_error as describe_ollama_error
    from local2.models.prompted_tools import CALL_INSTRUCTION as CALL_INSTRUCTION
    from local2.models.prompted_tools import CALL_TEMPLATE as CALL_TEMPLATE
    from local2.models.prompted_tools import RESULT_PREFIX as RESULT_PREFIX
    from local2.models.prompted_tools import TOOLS_HEADER as TOOLS_HEADER
    from local2.models.prompted_tools import prompted_messages as prompted_messages
    from local2.models.scripted import ScriptedChatModel as ScriptedChatModel
    from local2.models.thinking import message_text as message_text
    from local2.models.thinking import thinking_and_answer as thinking_and_answer
    from local2.models.toolcall_args import REPAIR_HEADER as REPAIR_HEADER
    from local2.models.toolcall_args import REPAIR_TOOLS_LINE as REPAIR_TOOLS_LINE
    from local2.models.toolcall_args import repair_message as repair_message
    from local2.models.toolcall_args import validate_args as validate_args
    from local2.models.toolcall_text import ParsedToolCalls as ParsedToolCalls
    from local2.models.toolcall_text import parse_tool_calls as parse_tool_calls
else:
    __getattr__ = lazy_face(__name__, __file__)
