"""notebooks/quickstart.ipynb runs top to bottom against an Ollama-protocol test model."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "quickstart.ipynb"


def outputs(cell: dict) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


@pytest.mark.slow
def test_quickstart_runs_end_to_end(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCAL2_NOTEBOOK_FAKE", "1")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()  # raises CellExecutionError naming the cell on any failure
    code = [c for c in notebook.cells if c.cell_type == "code"]
    text = "\n".join(outputs(c) for c in code)
    assert "The capital of France is Paris." in text
    assert "web_search(" in text and "tool.result.web_search" in text  # tool calls, events
    assert "favourite colour is green" in text  # a memory hit, recalled in another session
    assert "original checkpoints still listed: True" in text
    assert "replay:   Why is the sky blue?" in text
