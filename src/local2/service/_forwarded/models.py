"""What the service's face forwards from :mod:`local2.models`."""

from local2.models import ScriptedChatModel, canonical, chat_models, list_models

__all__ = ["ScriptedChatModel", "canonical", "chat_models", "list_models"]
