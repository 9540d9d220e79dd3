"""Launching a framework's real CLI and saying honestly how it went.

lmms-eval and VLMEvalKit both exit 0 when an evaluation fails (an unknown
task, an exception in a model or a scorer): the only truth is in the files
they write. A launcher here therefore runs the framework's own CLI in a
subprocess (its output shown live and kept in a log file), then reads what it
wrote and collects every reason the run does not count into a
:class:`Verdict`, whose exit status is what the user's shell sees:

* 0: every requested task produced its metric and per-item samples, with no
  video error (or video errors allowed by ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1``)
  and an answer from the model to every item (no ``request_error``, no
  ``truncated`` response: :mod:`medhorizon_tasks.core.responses`);
* 1: the evaluation failed or is incomplete (one line per reason);
* 2: the run was refused before it started (bad arguments, pre-flight, its
  output folder in use by another run).

**A run owns its outputs.** Both frameworks name their files by what they
run, not by who runs it (lmms-eval by the second the evaluation started), so
two runs into one folder would write the same files and each would read the
other's as its own. A launcher therefore holds its output folder for the whole
run (:func:`own_outputs`: a file lock, and a note of who holds it) and a second
run into the same folder is refused at once, naming the first; and the verdict
reads only files this run wrote (:class:`RunStart`: what the folder held when
the run started, file by file, so that no clock decides it: a file dated in the
future by clock skew, a copy or NFS is still an earlier run's), which each
adapter checks further against what the run was (the model, its arguments, the
tasks).

**A run's child dies with it.** The framework runs in a process group of its
own, killed on every way out of :func:`run_logged` (its end, an exception,
Ctrl-C, the ``timeout``), and on Linux the child is told to die with its parent
(``PR_SET_PDEATHSIG``), so a launcher killed with SIGKILL, which releases the
folder lock at once, does not leave it writing into the folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import DataError, MedHorizonError
from ..core.file_identity import stat_key
from ..core.safeio import atomic_write_json, read_json

__all__ = ["Verdict", "run_logged", "last_error", "EXIT_OK", "EXIT_FAILED", "EXIT_REFUSED", "OutputsInUse",
           "own_outputs", "RunStart", "RUN_LOCK", "RUN_HOLDER", "limit_problem",
           "tasks_problem"]

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2


@dataclass
class Verdict:
    """Why a finished run does not count (``reasons``), and what the user should know anyway (``notes``)."""

    framework: str
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: bool = False  # stopped before the evaluation started (pre-flight, arguments)

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def exit_code(self) -> int:
        if self.ok:
            return EXIT_OK
        return EXIT_REFUSED if self.refused else EXIT_FAILED

    def add_video_errors(self, where: str, n: int, first: str) -> None:
        """``n`` items of ``where`` were scored as video errors: a reason the run does not count, or only a
        note when ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1`` accepts such a run."""
        from .preflight import ALLOW_VIDEO_ERRORS_ENV, allow_video_errors

        text = f"{where}: {n} item(s) had video errors and were counted wrong (first: {first})"
        if allow_video_errors():
            self.notes.append(text + f" [{ALLOW_VIDEO_ERRORS_ENV} is set]")
        else:
            self.reasons.append(text + f"; set {ALLOW_VIDEO_ERRORS_ENV}=1 to accept such a run")

    def add_failed_responses(self, where: str, failures: list[dict], shown: int = 10) -> None:
        """Items of ``where`` whose response was a failure (``{"uid", "status", "reason"}``, a request that failed
        after its retries or an empty or cut-off reply): always a reason the run does not count, each listed."""
        if not failures:
            return
        statuses = [f["status"] for f in failures]
        kinds = ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))
        items = "; ".join(f"item {f['uid']}: {f['status']} ({f['reason']})" for f in failures[:shown])
        more = f"; ... and {len(failures) - shown} more (the report lists them)" if len(failures) > shown else ""
        self.reasons.append(f"{where}: {len(failures)} item(s) got no answer from the model ({kinds}) and were "
                            f"counted wrong: {items}{more}")

    def summary(self, prog: str = "medhorizon-tasks") -> str:
        if self.ok:
            return "\n".join([f"{prog}: {self.framework} run OK", *(f"  note: {n}" for n in self.notes)])
        head = f"{prog}: {self.framework} run FAILED: {self.reasons[0]}"
        return "\n".join([head, *(f"  also: {r}" for r in self.reasons[1:]), *(f"  note: {n}" for n in self.notes)])


def limit_problem(limit, *, option: str = "--limit", all_value: str | None = None) -> str | None:
    """Why ``limit`` (items per task) is refused: 0 or a negative number would run every item (lmms-eval and
    VLMEvalKit apply a limit only when it is non-zero), so "none" is never silently "all". ``all_value``: a value the
    framework documents as "every item" (lmms-eval's -1), let through. Every command that takes ``--limit`` asks this."""
    if limit is None:
        return None
    text = str(limit).strip()
    if all_value is not None and text == all_value:
        return None
    try:
        value = int(text)
    except ValueError:
        return f"{option} {text}: expected a whole number of items per task (at least 1)"
    if value < 1:
        return (f"{option} {text}: expected a positive number of items per task (0 would run every item); "
                "leave --limit out to run them all")
    return None


def tasks_problem(tasks: str | None, *, option: str = "--tasks") -> str | None:
    """Why a comma-separated task list is refused before a framework starts: an empty name (``a,,b``, a
    trailing comma) would reach the framework, which dies on it half a minute later with a traceback."""
    if tasks is None:
        return None
    names = tasks.split(",")
    if any(not n.strip() for n in names):
        return (f"{option} {tasks!r}: an empty task name (two commas together, or a comma at an end); give "
                "task names separated by single commas")
    return None


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _dies_with_parent():
    """The child's set-up between fork and exec: a process group of its own (killed whole by the parent), and on
    Linux SIGKILL when the parent dies, however it dies (``prctl(PR_SET_PDEATHSIG)``)."""
    parent = os.getpid()
    prctl = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            prctl = ctypes.CDLL(None, use_errno=True).prctl  # loaded here: nothing is imported after the fork

    def setup() -> None:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before the signal was armed
                os._exit(1)
    return setup


def _end_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop the child's process group (the child and whatever it started): SIGTERM, then SIGKILL after
    ``grace_s``; nothing when the group is gone."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the child if it is still there, and what it left in its group
    proc.wait()


def run_logged(cmd: list[str], *, env: dict | None = None, log: Path, echo: bool = True,
               timeout: float | None = None, cwd: str | os.PathLike | None = None) -> int:
    """Run ``cmd``, its output shown live (``echo``) and written to ``log``; returns its exit status.

    The child runs in a process group of its own, ended on every way out of this function, and on Linux dies
    with this process (see the module's text). Ctrl-C is passed on to the child, which then stops as it would
    on its own.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8", errors="replace") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                text=True, errors="replace", bufsize=1, preexec_fn=_dies_with_parent())
        assert proc.stdout is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            for line in proc.stdout:
                fh.write(line)
                if echo:
                    sys.stderr.write(line)
                if deadline is not None and time.monotonic() > deadline:
                    fh.write(f"\n[killed after {timeout:g} s]\n")
                    _end_group(proc, grace_s=0)
                    break
            return proc.wait()
        except KeyboardInterrupt:  # the terminal's Ctrl-C reaches this group only: passed on, then waited for
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGINT)
            proc.wait()
            raise
        finally:
            _end_group(proc)


_ERROR_LINE = re.compile(r"(?:^|\s)(?:[A-Za-z_.]*(?:Error|Exception|Refused)\b[^\n]*|.*\|\s*ERROR\s*\|[^\n]*)")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Refused)\b: ")  # a traceback's last line
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # loguru colours lmms-eval's log lines


def last_error(log: Path, limit: int = 300) -> str | None:
    """The last exception of ``log`` (a traceback's last line: its type and message), else the last line that
    reports an error (shortened, colours removed), if any."""
    try:
        lines = [_ANSI.sub("", line).strip() for line in
                 log.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return None
    for pattern in (_EXCEPTION_LINE, _ERROR_LINE):
        for text in reversed(lines):
            if text and pattern.search(text) and not text.startswith("$ "):
                return text if len(text) <= limit else text[: limit - 3] + "..."
    return None


# ------------------------------------------------------------------ a run owns its outputs

RUN_LOCK = ".medhorizon_run.lock"     # the lock file a run holds in its output folder
RUN_HOLDER = ".medhorizon_run.json"   # who holds it (removed when the run ends)


class OutputsInUse(MedHorizonError):
    """The output folder is held by another run (:func:`own_outputs`)."""


@contextlib.contextmanager
def own_outputs(folder: str | os.PathLike, command: str, *, option: str) -> Iterator[Path]:
    """Hold ``folder`` for this run until the block ends; :class:`OutputsInUse` at once when another run holds
    it (its pid, host, start and command named, and ``option``, the argument that chose the folder).

    A file lock (``filelock``: ``flock``, released by the system when the process dies, so a killed run never
    leaves the folder held); the holder's note is only for the message."""
    from filelock import FileLock, Timeout

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / RUN_LOCK), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise OutputsInUse(f"{folder} is in use by another run ({_holder(folder)}): two runs writing into one "
                           f"folder overwrite each other's files. Wait for it to end, or choose another "
                           f"{option}.") from None
    holder = folder / RUN_HOLDER
    try:
        atomic_write_json(holder, {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                                   "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")})
        yield folder
    finally:
        with contextlib.suppress(OSError):
            holder.unlink()
        lock.release()


def _holder(folder: Path, wait_s: float = 5.0) -> str:
    """Who holds ``folder``, from its note; a run that took the lock an instant ago writes its note just after,
    so a missing note is waited for (``wait_s``) before it is said to be missing."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            note = read_json(folder / RUN_HOLDER)
        except DataError:
            note = None
        if isinstance(note, dict):
            return f"pid {note.get('pid')} on {note.get('host')} since {note.get('started')}: {note.get('command')}"
        if time.monotonic() >= deadline:
            return f"its holder wrote no note in {wait_s:g} s"
        time.sleep(0.05)


class RunStart:
    """A run's start: its ``run_id``, its ``time`` (``time.time()``), and what every file under ``roots`` was at
    that moment (device, inode, size, mtime_ns, ctime_ns). :meth:`wrote` says whether the run wrote a file: one
    that is new, or not what it was. No clock decides it: a file dated in the future (clock skew, a copied
    folder, NFS) that the run did not touch is still what it was, and any write changes its ``ctime``, which
    no one can set back."""

    def __init__(self, *roots: str | os.PathLike):
        self.run_id = uuid.uuid4().hex
        self.time = time.time()
        self._before: dict[str, tuple] = {}
        for root in roots:
            for dirpath, _, names in os.walk(root):
                for name in names:
                    path = os.path.realpath(os.path.join(dirpath, name))
                    with contextlib.suppress(OSError):
                        self._before[path] = stat_key(path)

    def wrote(self, path: str | os.PathLike) -> bool:
        """Whether ``path`` was written since the run started (False when it is not there)."""
        real = os.path.realpath(path)
        try:
            now = stat_key(real)
        except OSError:
            return False
        return self._before.get(real) != now
