"""The Gradio app mounted at ``/`` of the server's FastAPI app, with people signed in to it
(the server that puts the app, the API and ``/mcp`` on one port is :mod:`local2.server`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.routing import Mount

from local2.service import Agent, Identify
from local2.ui._sign_in import SignIn, SignInSwitch, proxied_user


def mount_ui(
    app: FastAPI, agent: Agent, token: str | None, who: Identify, host: str, port: int
) -> FastAPI:
    """``app`` with the Gradio app mounted at ``/``, and people signed in to it: by the
    trusted proxy's header, or at Gradio's login page while anyone is configured."""
    # lazy: gradio, fastapi, local2.ui: ~3.6 s, 1409 modules at import
    import gradio as gr

    from local2.ui._app import CSS, THEME, build_ui
    from local2.ui._safe_markdown import set_image_hosts

    settings = agent.settings
    set_image_hosts(settings.ui.image_hosts)
    sign_in = SignIn(agent.access, token, who.guard)  # the API's rule, one guard for both
    # Behind a trusted proxy it names each person on every request (no login page);
    # otherwise SignInSwitch turns Gradio's login page on and off as people come and go.
    # proxied: keyword arguments for Gradio's mount_gradio_app
    proxied: dict[str, Any] = {"auth_dependency": proxied_user(who)} if who.user_header else {}
    app = gr.mount_gradio_app(
        app,
        build_ui(agent),
        path="/",
        server_name=host,
        server_port=port,
        footer_links=["api"],
        run_history=False,
        ssr_mode=False,
        css=CSS,
        theme=THEME,
        max_file_size=settings.documents.max_bytes,  # the attach box: refused as it arrives
        **proxied,
    )
    if not proxied:
        api = [route for route in app.routes if not isinstance(route, Mount)]
        app.add_middleware(
            SignInSwitch, gradio=mounted_gradio(app), sign_in=sign_in, api_routes=api
        )
    return app


def mounted_gradio(app: FastAPI) -> Any:
    """The Gradio app mounted at ``/`` in ``app`` (its ``auth`` and sign-ins)."""
    from gradio.routes import App  # lazy: gradio, fastapi: ~2.9 s, 1272 modules at import

    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, App):
            return route.app
    raise LookupError("no Gradio app is mounted")  # mount_gradio_app always mounts one
