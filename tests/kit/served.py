"""An ASGI app served by uvicorn on a free loopback port, in a thread:
``with Served(app) as url``."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn

from local2.ports import free_port


class Served:
    def __init__(self, app: Any) -> None:
        self.port = free_port()
        # A browser's open event stream would hold a graceful shutdown until join's 10 s ran
        # out: after 1 s what is still open is cancelled.
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert time.time() < deadline, "server did not start"
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
