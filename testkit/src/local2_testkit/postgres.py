"""A throwaway Postgres cluster on a free loopback port, for tests and benchmarks.

Uses Debian's ``postgresql`` binaries (``/usr/lib/postgresql/<v>/bin``, installed by
``scripts/setup.sh --dev``). ``initdb`` refuses to run as root, so as root the cluster runs
as the ``postgres`` user the package creates. Trust authentication for the ``local2`` role
on 127.0.0.1 only; the cluster and its directory are removed on :meth:`stop`.

    with TempPostgres() as pg:
        url = pg.create_database("t1")  # postgresql://local2@127.0.0.1:PORT/t1
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from local2.ports import free_port

ROLE = "local2"
RUN_AS = "postgres"  # the user Debian's package creates


class PostgresMissing(RuntimeError):
    """No Postgres server binaries on this machine."""


def find_bindir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` are: Debian's versioned directory, else PATH."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise PostgresMissing(
        "Postgres is not installed: run scripts/setup.sh --dev as root, "
        "or `sudo apt-get install postgresql`."
    )


def _temp_root() -> str:
    """The temporary directory, if the ``postgres`` user can reach it (as root, TMPDIR may be
    inside a home only root can enter), else /tmp."""
    root = Path(tempfile.gettempdir()).resolve()
    if os.geteuid() != 0:
        return str(root)
    reachable = all(p.stat().st_mode & 0o001 for p in (root, *root.parents))
    return str(root) if reachable else "/tmp"


class TempPostgres:
    """A Postgres cluster in a temporary directory, listening on 127.0.0.1 only."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable  # fsync on: for benchmarks; tests run faster without it
        self.port = 0
        self.dir: Path | None = None
        self._prefix: list[str] = []

    @property
    def data(self) -> Path:
        assert self.dir is not None
        return self.dir / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str | Path) -> None:
        result = subprocess.run(
            [*self._prefix, *map(str, args)], capture_output=True, text=True, timeout=120
        )
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {result.stderr.strip() or result.stdout}")

    def start(self) -> TempPostgres:
        bindir = find_bindir()
        self.dir = Path(tempfile.mkdtemp(prefix="local2-pg-", dir=_temp_root()))
        if os.geteuid() == 0:
            user = pwd.getpwnam(RUN_AS)
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._prefix = ["runuser", "-u", RUN_AS, "--"]
        self._run(
            bindir / "initdb",
            "-D",
            self.data,
            "-U",
            ROLE,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        self.port = free_port()
        options = f"-h 127.0.0.1 -p {self.port} -k {self.dir} -c max_connections=300"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        atexit.register(self.stop)
        self._run(
            bindir / "pg_ctl",
            "-D",
            self.data,
            "-l",
            self.dir / "server.log",
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        )
        return self

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.dir is None:
            return
        if self.data.exists():
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run(
                    find_bindir() / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"
                )
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
