"""The top of the app, above the tabs: what answers, who is signed in, the server's notices,
the model picker and the banner every part shows its problems in."""

from __future__ import annotations

from typing import Any

import gradio as gr

import local2.ui._render as render
from local2.contracts import LOCAL_NAME, AgentInfo, Person
from local2.ui._approval import code_span
from local2.ui._base import UIPart
from local2.ui._models import ModelPicker
from local2.ui._safe_markdown import neutralise


def note(message: str) -> str:
    """A start-up notice as the top of the app shows it: a label, then plain text (its
    addresses as code, not links: the notice says they do not answer)."""
    return f"**Note:** {render.unlinked(neutralise(message))}"


class Header(UIPart):
    """Lays out the top of the app (:meth:`build`); its components are given to the parts."""

    def build(self) -> None:
        agent = self.agent
        info = agent.info
        self.picker = ModelPicker.for_agent(agent)
        with gr.Row(equal_height=False, elem_id="local2-top-row"):  # wraps on a phone
            with gr.Column(scale=3, min_width=320):
                self._title(info)
            self.model_pick = gr.Dropdown(
                self.picker.choices,
                value=self.picker.value,
                label="Model",
                info=self.picker.info,
                interactive=len(self.picker.choices) > 1,
                # Nothing to pick and nothing the notices do not say: the header names it.
                visible=self.picker.worth_showing(agent.notices),
                scale=0,
                min_width=300,
                elem_id="local2-model",
            )
        self._signed_in_row()
        gr.Markdown(
            "\n\n".join(note(n) for n in agent.notices),
            visible=bool(agent.notices),
            elem_id="local2-notice",
        )
        self.banner = gr.Markdown("", visible=False, elem_id="local2-banner")

    def _title(self, info: AgentInfo) -> None:
        gr.Markdown(
            f"## LoCAL2 · a local research assistant you can see inside\n"
            f"Model **{info.model}** ({info.backend}) · tools: "
            f"{', '.join(info.tools) or 'none'} · memory "
            f"{'on' if info.memory else 'off'} · critic "
            f"{'on' if info.critic else 'off'}",
            elem_id="local2-header",
        )

    def _signed_in_row(self) -> None:
        with gr.Row(visible=False, elem_id="local2-signed-in-row") as self.signed_in_row:
            self.signed_in_md = gr.Markdown("", elem_id="local2-signed-in")
            gr.Button(  # Gradio's own /logout; behind a proxy, signing out is the proxy's
                "Log out",
                link="logout",
                link_target="_self",
                size="sm",
                scale=0,
                min_width=90,
                visible=not self.proxied,
                elem_id="local2-logout",
            )

    @property
    def signed_in_outputs(self) -> list[Any]:
        """What :meth:`signed_in` draws, in its order."""
        return [self.signed_in_row, self.signed_in_md]

    def signed_in(self, person: Person | None, request: gr.Request | None) -> tuple[Any, str]:
        """The row saying who is signed in: shown once anyone is configured (or names come
        from a proxy); with one person, as before, nothing."""
        if not (self.proxied or self.agent.access.configured()):
            return gr.update(visible=False), ""
        if person is None:
            return gr.update(visible=True), "Not signed in as anyone this server knows."
        via = " (through the sign-in proxy)" if self.proxied and person.name != LOCAL_NAME else ""
        role = " · admin: may read everyone's sessions (each read is noted)" if person.admin else ""
        return gr.update(visible=True), f"Signed in as **{code_span(person.name)}**{via}{role}"
