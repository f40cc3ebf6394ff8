"""Model backends and what small models write: text tool calls and the keyword router."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "CALL_INSTRUCTION": "local2.models.prompted_tools",
    "CALL_TEMPLATE": "local2.models.prompted_tools",
    "Cancellation": "local2.models.cancellable",
    "ModelInfo": "local2.models.ollama_catalog",
    "ParsedToolCalls": "local2.models.toolcall_text",
    "REPAIR_HEADER": "local2.models.toolcall_args",
    "REPAIR_TOOLS_LINE": "local2.models.toolcall_args",
    "REPETITION_NOTE": "local2.models.embedded",
    "RESULT_PREFIX": "local2.models.prompted_tools",
    "ScriptedChatModel": "local2.models.scripted",
    "TOOLS_HEADER": "local2.models.prompted_tools",
    "cancellable_invoke": "local2.models.cancellable",
    "canonical": "local2.models.ollama_catalog",
    "chat_models": "local2.models.ollama_catalog",
    "describe_ollama_error": "local2.models.ollama_failures",
    "has_model": "local2.models.ollama_catalog",
    "list_models": "local2.models.ollama_catalog",
    "make_chat_model": "local2.models.backend",
    "message_text": "local2.models.thinking",
    "parse_tool_calls": "local2.models.toolcall_text",
    "prompted_messages": "local2.models.prompted_tools",
    "repair_message": "local2.models.toolcall_args",
    "thinking_and_answer": "local2.models.thinking",
    "validate_args": "local2.models.toolcall_args",
}
__getattr__ = lazy_face(__name__, _FACE)

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
