"""The app is composed, not mixed: each tab and panel is an object given what it uses, the
tabs are a list of parts, and a tab added to that list changes nothing of the others."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pytest
from langchain_core.messages import AIMessage

import local2.ui
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2.ui._app import LocalUI
from local2.ui._base import TabPart, UIPart
from local2.ui._research_shown import RunShown
from local2.ui._research_steer import ResearchSteer
from tests.kit.helpers import make_settings

TABS = ["chat", "time-travel", "arena", "research", "watches", "evaluate", "library"]


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Agent]:
    model = ScriptedChatModel(replies=[AIMessage("ok")], repeat_last=True)
    made = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    yield made
    made.close()


def test_no_part_is_mixed_into_another() -> None:
    """A part's base is at most ``UIPart`` (the agent, ``person``, ``notice``), which declares
    nothing of any part; the app itself inherits nothing. (The Research tab's steering and
    what it shows of a run are its own modules' halves of that tab.)"""
    assert UIPart.__annotations__ == {}
    assert LocalUI.__bases__ == (object,)
    for info in pkgutil.iter_modules(local2.ui.__path__):
        module = importlib.import_module(f"local2.ui.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or cls is UIPart:
                continue
            parts = [b for b in cls.__mro__[1:] if b.__module__.startswith("local2.ui.")]
            halves = {UIPart, TabPart, ResearchSteer, RunShown}
            allowed = halves if name == "ResearchTab" else {UIPart}
            assert set(parts) <= allowed, f"{module.__name__}.{name} mixes in {parts}"


def test_each_tab_is_its_own_module_named_after_it(agent: Agent) -> None:
    """A tab is one module ``ui/_<name>_tab.py`` whose ``<Name>Tab`` is the part the app lists
    (``time-travel``: ``_time_travel_tab.TimeTravelTab``), and no other module holds a tab."""
    ui = LocalUI(agent)
    ui.build()
    for part in ui.parts:
        name = part.tab_id.replace("-", "_")
        camel = "".join(word.capitalize() for word in name.split("_"))
        cls = type(part)
        assert (cls.__module__, cls.__name__) == (f"local2.ui._{name}_tab", f"{camel}Tab")
    modules = {info.name for info in pkgutil.iter_modules(local2.ui.__path__)}
    tabs = {m for m in modules if m.endswith("_tab")}
    assert tabs == {f"_{p.tab_id.replace('-', '_')}_tab" for p in ui.parts}
    assert not {"tabs", "_tabs"} & modules  # no module of adapters beside the tabs


class Extra:
    """A tab that touches no other: its own components and handler."""

    title = "Extra"
    tab_id = "extra"

    def build(self, item: gr.Tab) -> None:
        self.button = gr.Button("Hello", elem_id="extra-hello")
        self.said = gr.Markdown("", elem_id="extra-said")

    def wire(self, demo: gr.Blocks) -> None:
        self.button.click(self.hello, None, [self.said])

    def hello(self) -> str:
        return "hello"


class WithExtra(LocalUI):
    def tab_parts(self, tabs: gr.Tabs) -> list[TabPart]:
        return [*super().tab_parts(tabs), Extra()]


def wiring(demo: gr.Blocks) -> list[tuple[Any, ...]]:
    """Each event as the page sees it: its handler's name, and the elem_ids it reads and
    writes (a component with none: its place among the app's)."""
    config = demo.get_config_file()
    first = min(c["id"] for c in config["components"])
    named = {c["id"]: c["props"].get("elem_id") or c["id"] - first for c in config["components"]}
    return [
        (
            d["api_name"],
            tuple(named.get(t[0], "the page") for t in d["targets"]),  # a load: the page's
            tuple(named[i] for i in d["inputs"]),
            tuple(named[o] for o in d["outputs"]),
        )
        for d in config["dependencies"]
    ]


def test_a_new_tab_is_one_more_part_and_changes_no_other(agent: Agent) -> None:
    plain = LocalUI(agent)
    before = wiring(plain.build())
    assert [p.tab_id for p in plain.parts] == TABS
    extended = WithExtra(agent)
    after = wiring(extended.build())
    assert [p.tab_id for p in extended.parts] == [*TABS, "extra"]
    assert after[: len(before)] == before  # every other tab's events, as they were
    assert after[len(before) :] == [("hello", ("extra-hello",), (), ("extra-said",))]
