"""A small MCP server for LoCAL2's examples and tests: unit conversion and arithmetic.

Run it over stdio (the default, what ``mcp.yaml`` launches as a subprocess)::

    python examples/mcp_units_server.py

or over streamable HTTP on loopback (endpoint ``http://127.0.0.1:N/mcp``)::

    python examples/mcp_units_server.py --http --port 8765

``--test-tools`` adds tools that misbehave on purpose, so the tests can prove a crashed or
silent server is survived: ``crash`` kills the process mid-call, ``sleep_forever`` never
answers, and ``fail`` returns a tool-level error.
"""

from __future__ import annotations

import argparse
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)

# Factor to the base unit of each dimension (metre, kilogram, second, litre).
_LINEAR: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "in": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "mi": ("length", 1609.344),
    "g": ("mass", 0.001),
    "kg": ("mass", 1.0),
    "lb": ("mass", 0.45359237),
    "oz": ("mass", 0.028349523125),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "ml": ("volume", 0.001),
    "l": ("volume", 1.0),
    "gal": ("volume", 3.785411784),
}
_TEMPERATURE = {"c", "f", "k"}


def _to_kelvin(value: float, unit: str) -> float:
    if unit == "c":
        return value + 273.15
    if unit == "f":
        return (value - 32.0) * 5.0 / 9.0 + 273.15
    return value


def _from_kelvin(value: float, unit: str) -> float:
    if unit == "c":
        return value - 273.15
    if unit == "f":
        return (value - 273.15) * 9.0 / 5.0 + 32.0
    return value


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert between units of one dimension; ``ValueError`` names what is wrong."""
    src, dst = from_unit.strip().lower(), to_unit.strip().lower()
    if src in _TEMPERATURE and dst in _TEMPERATURE:
        return _from_kelvin(_to_kelvin(value, src), dst)
    if src not in _LINEAR or dst not in _LINEAR:
        unknown = src if src not in _LINEAR and src not in _TEMPERATURE else dst
        raise ValueError(f"unknown unit: {unknown!r}")
    (dim_a, fa), (dim_b, fb) = _LINEAR[src], _LINEAR[dst]
    if dim_a != dim_b:
        raise ValueError(f"cannot convert {dim_a} ({src}) to {dim_b} ({dst})")
    return value * fa / fb


def build_server(test_tools: bool = False) -> MCPServer:
    server = MCPServer("units", instructions="Unit conversion and arithmetic.")

    @server.tool(annotations=READ_ONLY)
    def convert_units(value: float, from_unit: str, to_unit: str) -> str:
        """Convert a quantity between units, e.g. 5 km to mi, 100 f to c, 2 lb to kg.

        Units: mm cm m km in ft mi, g kg lb oz, s min h, ml l gal, c f k (temperature).
        """
        try:
            result = convert(value, from_unit, to_unit)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return f"{value:g} {from_unit} = {result:.6g} {to_unit}"

    @server.tool(annotations=READ_ONLY)
    def add(a: float, b: float) -> str:
        """Add two numbers."""
        return f"{a + b:g}"

    if test_tools:

        @server.tool()
        def fail(message: str) -> str:
            """Always fail with the given message (a tool-level error)."""
            raise ToolError(message)

        @server.tool()
        def crash() -> str:
            """Kill the server process in the middle of the call."""
            os._exit(3)

        @server.tool()
        async def sleep_forever() -> str:
            """Never answer (only this call: the server keeps serving others)."""
            await anyio.sleep_forever()
            return "unreachable"

        @server.tool()
        def pid() -> str:
            """The server's process id, to tell a restarted server from the first one."""
            return str(os.getpid())

        @server.tool()
        def echo_env(name: str) -> str:
            """Whether an environment variable reached the server: its length, never its value."""
            value = os.environ.get(name)
            return f"set ({len(value)} chars)" if value else "unset"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port on 127.0.0.1")
    parser.add_argument("--test-tools", action="store_true", help="add crash/hang/fail tools")
    opts = parser.parse_args()
    server = build_server(test_tools=opts.test_tools)
    if opts.http:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)
    else:
        server.run()


if __name__ == "__main__":
    main()
