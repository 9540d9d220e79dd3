"""The submission service's real parts for the tests: a `leaderboard serve` process on a free port of
127.0.0.1, and a PostgreSQL server of the test's own (initdb in a temporary folder, a free port, stopped at the
end). Nothing is mocked: the tests talk HTTP to uvicorn, and uvicorn to SQLite or PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

MAINTAINER_TOKEN = "maintainer-token-for-the-tests-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_command(port: int, db: str, *extra: str) -> list[str]:
    """The command of the `leaderboard serve --help` example, on a port and store of the test's."""
    exe = Path(sys.executable).with_name("medhorizon-tasks")
    return [str(exe), "leaderboard", "serve", "--synthetic", "--host", "127.0.0.1", "--port", str(port),
            "--db", db, "--log-level", "warning", *extra]


class Server:
    """A running `leaderboard serve` process; ``url`` is its base address."""

    def __init__(self, db: str, *extra: str, env: dict | None = None, log: Path | None = None,
                 maintainer_token: str | None = MAINTAINER_TOKEN):
        self.db, self.extra = db, extra
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        if maintainer_token is not None:
            self.env["MEDHORIZON_MAINTAINER_TOKEN"] = maintainer_token
        else:
            self.env.pop("MEDHORIZON_MAINTAINER_TOKEN", None)
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 180) -> "Server":
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen(serve_command(self.port, self.db, *self.extra), env=self.env, stdout=out,
                                     stderr=subprocess.STDOUT if self.log else subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"leaderboard serve exited {self.proc.returncode}: "
                                   + (self.log.read_text(errors="replace")[-3000:] if self.log else ""))
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("leaderboard serve did not answer in time")

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def maintainer(token: str = MAINTAINER_TOKEN) -> dict:
    return {"Authorization": f"Bearer {token}"}


def post_submission(url: str, body: bytes | dict, headers: dict | None = None, timeout: float = 120) -> httpx.Response:
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    return httpx.post(url + "/api/submissions", content=body,
                      headers={"content-type": "application/json", **(headers or {})}, timeout=timeout)


# ------------------------------------------------------------------ PostgreSQL

def _pg_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL's server is not installed: the README's install has apt-get install postgresql")


class Postgres:
    """A PostgreSQL server of the test's own: initdb in ``folder``, on a free port of 127.0.0.1. As root
    (CI, this machine) the server runs as the ``postgres`` user that Debian's package creates (initdb refuses
    root)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.bin = _pg_bin()
        self.port = free_port()
        self.data = self.folder / "pgdata"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str, **kw) -> subprocess.CompletedProcess:
        done = subprocess.run([*self.as_user, *args], capture_output=True, text=True, **kw)
        if done.returncode:
            log = self.folder / "pg.log"
            raise RuntimeError(f"{' '.join(args[:1])} exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
                               + (log.read_text(errors="replace")[-2000:] if log.exists() else ""))
        return done

    def start(self) -> "Postgres":
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.as_user:
            self.folder.chmod(0o755)
            shutil.chown(self.folder, "postgres", "postgres")
            for parent in self.folder.parents:  # the server's user must reach its folder
                if parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o011)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "mh", "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "pg.log"), "-w", "-t", "60",
                  "-o", f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off", "start")
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "mh", "board")
        return self

    @property
    def url(self) -> str:
        return f"postgresql://mh@127.0.0.1:{self.port}/board"

    def stop(self) -> None:
        subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True)
