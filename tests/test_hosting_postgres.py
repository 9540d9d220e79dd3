"""docs/hosting.md's PostgreSQL steps, run as the page writes them (issue 45 item 7): a superuser makes the role
(``createuser --pwprompt``, the password typed in) and the database it owns, the server's user keeps the
password in ``~/.pgpass`` as the page says, and the page's ``leaderboard serve`` command starts on it and makes
its tables owned by that role.

The PostgreSQL server is the test's own (tests/service_server.py), set to ask every role but its superuser for a
password (scram-sha-256), so the ``~/.pgpass`` line is what lets the service in. What differs from the page: the
embedded synthetic data in place of ``--data`` (the release is not here), the server's free port in place of
5432, and the service's own port; the superuser's connection comes from ``PGHOST``/``PGPORT``/``PGUSER``, as a
shell of ``sudo -u postgres -i`` has it from the local socket.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from service_server import MAINTAINER_TOKEN, Postgres, free_port
from test_docs_examples import FENCE

PAGE = Path(__file__).resolve().parents[1] / "docs" / "hosting.md"
PASSWORD = "a-password-for-the-board-role"


def page_steps() -> tuple[list[str], str]:
    """(the superuser's commands, the serve command) of the page's PostgreSQL section."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("**With PostgreSQL**"):]
    blocks = [m.group(2) for m in FENCE.finditer(section)][:2]
    setup = [line for line in blocks[0].splitlines() if line.strip()]
    return setup, " ".join(blocks[1].replace("\\\n", " ").split())


def pgpass_line() -> str:
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    return re.search(r"`~/.pgpass` holds that password \(one line, `([^`]+)`", text).group(1)


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    srv = Postgres(tmp_path_factory.mktemp("hosting-pg")).start()
    # the helper makes a database "board" for the service tests; the page's steps make their own
    srv._run(str(srv.bin / "dropdb"), "-h", "127.0.0.1", "-p", str(srv.port), "-U", "mh", "board")
    hba = srv.data / "pg_hba.conf"
    hba.write_text("host all mh 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
    if srv.as_user:
        shutil.chown(hba, "postgres", "postgres")
    srv._run(str(srv.bin / "pg_ctl"), "-D", str(srv.data), "reload")
    time.sleep(1)
    yield srv
    srv.stop()


def test_the_pages_postgresql_steps_run_as_written(pg, synthetic, tmp_path):
    setup, serve = page_steps()
    assert setup == ["createuser --pwprompt board", "createdb --owner board board"]
    superuser = {**os.environ, "PATH": f"{pg.bin}{os.pathsep}{os.environ['PATH']}", "PGHOST": "127.0.0.1",
                 "PGPORT": str(pg.port), "PGUSER": "mh"}
    for command in setup:
        # no terminal (a new session): createuser reads the password it asks for, twice, from its input
        done = subprocess.run(["bash", "-c", command], env=superuser, input=f"{PASSWORD}\n{PASSWORD}\n",
                              capture_output=True, text=True, timeout=120, start_new_session=True)
        assert done.returncode == 0, (command, done.stdout, done.stderr)

    def as_superuser(sql: str) -> str:
        return subprocess.run([str(pg.bin / "psql"), "-At", "-d", "board", "-c", sql], env=superuser,
                              capture_output=True, text=True, timeout=60, check=True).stdout.strip()

    assert as_superuser("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'board'") == "board"

    # the server's user: ~/.pgpass as the page writes it, mode 600; without it the role is refused
    home = tmp_path / "home"
    home.mkdir()
    line = pgpass_line().replace("5432", str(pg.port)).replace("PASSWORD", PASSWORD)
    (home / ".pgpass").write_text(line + "\n")
    (home / ".pgpass").chmod(0o600)
    port = free_port()
    command = (serve.replace("MEDHORIZON_MAINTAINER_TOKEN=...", f"MEDHORIZON_MAINTAINER_TOKEN={MAINTAINER_TOKEN}")
               .replace("127.0.0.1:5432", f"127.0.0.1:{pg.port}"))
    command = re.sub(r"(--data \S+\s+)+", "--synthetic ", command) + f" --host 127.0.0.1 --port {port}"
    assert command.split()[1:4] == ["medhorizon-tasks", "leaderboard", "serve"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", "-c", command], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline, health = time.monotonic() + 300, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        assert proc.poll() is None and health is not None, log.read_text(errors="replace")[-3000:]
        assert health.json()["submissions"] == 0
        owners = as_superuser("SELECT DISTINCT tableowner FROM pg_tables WHERE tablename LIKE 'mh_%'")
        assert owners == "board"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the shell and the server it started: their own process group
        proc.wait(30)

    # the password is what let it in: without ~/.pgpass the same command stops with the store's message
    (home / ".pgpass").unlink()
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "cannot open the store" in done.stderr, done.stderr[-2000:]
    assert PASSWORD not in done.stderr
