"""The checkpointer's serializer: large blobs compressed, small ones stored as they are."""

from __future__ import annotations

import zlib

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from local2.storage._checkpointer import (
    MIN_COMPRESSED,
    SUFFIX,
    CompressedSerializer,
    sqlite_checkpointer,
)


def test_small_values_are_stored_uncompressed_and_load() -> None:
    serde = CompressedSerializer()
    for value in ("publish", 3, {"tool_rounds": 1}, None, ["a"]):
        kind, blob = serde.dumps_typed(value)
        assert not kind.endswith(SUFFIX), (value, kind)
        assert len(blob) < MIN_COMPRESSED
        assert serde.loads_typed((kind, blob)) == value


def test_large_values_are_compressed_smaller_and_load() -> None:
    serde = CompressedSerializer()
    messages = [HumanMessage(f"question {i} " * 20) for i in range(20)]
    plain = JsonPlusSerializer().dumps_typed(messages)[1]
    kind, blob = serde.dumps_typed(messages)
    assert kind.endswith(SUFFIX)
    assert len(blob) < len(plain) / 2
    assert zlib.decompress(blob) == plain
    assert serde.loads_typed((kind, blob)) == messages


def test_blobs_of_an_uncompressed_saver_still_load() -> None:
    value = [AIMessage("an answer " * 100)]
    written = JsonPlusSerializer().dumps_typed(value)
    assert CompressedSerializer().loads_typed(written) == value


def test_a_saved_checkpoint_reads_back_whole(tmp_path) -> None:
    """Through the real SQLite saver: a checkpoint with both small and large channels."""
    from langgraph.checkpoint.base import empty_checkpoint

    saver = sqlite_checkpointer(tmp_path / "checkpoints.sqlite")
    checkpoint = empty_checkpoint()
    big = [HumanMessage("what is in the report? " * 40)]
    checkpoint["channel_values"] = {"decision": "publish", "messages": big}
    checkpoint["channel_versions"] = {"decision": 1, "messages": 1}
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saved = saver.put(config, checkpoint, {"source": "loop", "step": 0}, {})
    saver.put_writes(saved, [("decision", "generate"), ("messages", big)], task_id="task")
    loaded = saver.get_tuple(saved)
    assert loaded is not None
    assert loaded.checkpoint["channel_values"] == {"decision": "publish", "messages": big}
    assert [(c, v) for _, c, v in loaded.pending_writes] == [
        ("decision", "generate"),
        ("messages", big),
    ]
