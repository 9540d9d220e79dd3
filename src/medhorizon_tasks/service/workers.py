"""Uploads are read in worker processes, so that no upload can stop the service from answering.

Reading an upload is linear in its size (:mod:`.intake`), but a linear step over 100 MiB in one call at C
speed (decoding, ``json.loads``) still holds the interpreter lock for most of a second, and threads of the
process that answers ``/``, ``/api/board`` and ``/healthz`` wait that long. A worker process has a lock of its
own: the serving process only sends the bytes and gets back the checked submission (its predictions, not the
parsed file).

Workers are started with ``spawn`` (a fork of a process running threads and an event loop is unsafe), get the
server's data once (the pool's initializer), and start on the first upload. A worker that dies (killed, out of
memory) breaks the pool: that upload is answered 503 with a line, and the next starts a new pool.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..benchmarks.data import BenchmarkData
from .intake import Intake, Refused, looks_like_submission, make_from_samples, read_submission_upload

__all__ = ["IntakeWorkers", "DEFAULT_INTAKE_WORKERS"]

DEFAULT_INTAKE_WORKERS = 2

_datas: Mapping[str, BenchmarkData] = {}


def _init(datas: Mapping[str, BenchmarkData], parent: int) -> None:
    global _datas
    _datas = datas
    # A spawned worker holds its own copy of the task queue's writing end, so the serving process's death
    # (SIGKILL, or an exit that does not wait for the pool) never reaches it as an end of file: it watches.
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _read(body: bytes, form: Mapping[str, str] | None, filename: str | None, what: str,
          datas: Mapping[str, BenchmarkData] | None = None, config: bytes | None = None):
    """In a worker: the checked upload, as a small tuple (the data stays in the worker; bytes equal to the
    upload are not sent back)."""
    datas = _datas if datas is None else datas
    if form is None or looks_like_submission(body):
        intake = read_submission_upload(body, datas, what=what)
    else:
        intake = make_from_samples(body, form, datas, filename=filename, config=config)
    same = intake.submission_bytes is body or intake.submission_bytes == body
    return ({"metadata": intake.value.get("metadata")}, intake.data.benchmark,
            None if same else intake.submission_bytes, intake.kind, intake.submission)


class IntakeWorkers:
    """``await read(body, form=None)``: :func:`~.intake.read_submission_upload` (no form) or, for a form's file
    that is not a submission JSON, :func:`~.intake.make_from_samples`, in a worker process. ``workers=0``
    reads in a thread of this process (for embedding the application in tests)."""

    def __init__(self, datas: Mapping[str, BenchmarkData], workers: int = DEFAULT_INTAKE_WORKERS):
        self.datas, self.workers = dict(datas), workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_init, initargs=(self.datas, os.getpid()))
            return self._pool

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    async def read(self, body: bytes, *, form: Mapping[str, str] | None = None, filename: str | None = None,
                   what: str = "submission", config: bytes | None = None) -> Intake:
        """``config``: the run's lmms-eval results file beside a samples file (its protocol)."""
        if self.workers <= 0:
            from fastapi.concurrency import run_in_threadpool

            got = await run_in_threadpool(_read, body, form, filename, what, self.datas, config)
        else:
            pool = self._executor()
            try:
                got = await asyncio.wrap_future(pool.submit(_read, body, form, filename, what, None, config))
            except BrokenProcessPool:
                self._broken(pool)
                raise Refused("the server could not finish reading this upload (its reader stopped); nothing was "
                              "kept: try again later", status=503) from None
        value, bench, scored, kind, submission = got
        return Intake(value, self.datas[bench], body if scored is None else scored, kind, submission)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
