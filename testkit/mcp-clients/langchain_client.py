"""langchain-mcp-adapters against ``local2 mcp``, for LoCAL2's tests: run by the venv of
this folder (mcp<2, which the adapters require), never imported by the product.

    .venv/bin/python langchain_client.py '<plan JSON>'

plan: ``{"command", "args", "env", "calls": [{"tool", "arguments"}]}``. Loads the tools as
LangChain tools (one stdio session per call, as the adapters do) and calls each in turn;
prints ``{"tools": [names], "calls": [{"tool", "content" | "error", "seconds"}]}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from langchain_core.tools import ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient


async def main(plan: dict[str, Any]) -> dict[str, Any]:
    server = {"transport": "stdio", "command": plan["command"], "args": plan["args"]}
    server["env"] = plan.get("env")
    client = MultiServerMCPClient({"local2": server})
    tools = {tool.name: tool for tool in await client.get_tools()}
    calls: list[dict[str, Any]] = []
    for call in plan.get("calls", []):
        started = time.monotonic()
        done: dict[str, Any] = {"tool": call["tool"]}
        try:
            done["content"] = await tools[call["tool"]].ainvoke(call["arguments"])
        except ToolException as exc:
            done["error"] = str(exc)
        done["seconds"] = round(time.monotonic() - started, 3)
        calls.append(done)
    return {"tools": sorted(tools), "calls": calls}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1]))), default=str))
