"""A node's cores and memory, shared by the ranks that run on it.

``accelerate launch --num_processes 8`` (and ``torchrun``) start eight ranks on
one node, each with the same cores and the same memory in view. Left alone,
each would start a decoder thread per core and hold the whole decode memory
budget: eight times the node. So every process takes its share
(:func:`node_share`), computed once, when it first decodes:

* **decoder threads** per decode = the cores this process may run on
  (``os.sched_getaffinity``: a batch job's share) divided by the ranks on its
  node (``LOCAL_WORLD_SIZE``, which accelerate and torchrun set; 1 without a
  launcher), at least one; ``$MEDHORIZON_DECODE_THREADS`` sets it directly. The
  look-ahead runs at most that many decodes at once (and at most
  :data:`~.ahead.DEFAULT_AHEAD_WORKERS`).
* **decoded frames held in memory**: one node budget,
  ``$MEDHORIZON_NODE_MEMORY_MB``, default :data:`NODE_MEMORY_SHARE` (a quarter)
  of the memory available when the process starts decoding (``MemAvailable``
  of ``/proc/meminfo``), divided by the ranks on the node; half of a rank's
  share for the look-ahead, half for the plan store, each at most the
  one-process default of 2 GiB. ``$MEDHORIZON_PLAN_STORE_MB`` still sets the
  store's size directly, ``$MEDHORIZON_LOOKAHEAD_MB`` the look-ahead's.

Under a launcher each rank says its share once on stderr::

    medhorizon: rank 3 of 8 on this node: 4 decoder threads, 3.1 GB look-ahead, 3.1 GB plan store (...)
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from ..settings import env_number

__all__ = ["NodeShare", "node_share", "process_share", "reset_process_share", "announce_share", "check_settings",
           "lookahead_depth", "LOOKAHEAD_ENV", "DEFAULT_AHEAD_DEPTH", "local_ranks", "available_memory", "NODE_MEMORY_SHARE",
           "THREADS_ENV", "NODE_MEMORY_ENV", "AHEAD_MB_ENV", "STORE_ENV", "PROCESS_CAP_BYTES"]

THREADS_ENV = "MEDHORIZON_DECODE_THREADS"
NODE_MEMORY_ENV = "MEDHORIZON_NODE_MEMORY_MB"
AHEAD_MB_ENV = "MEDHORIZON_LOOKAHEAD_MB"
STORE_ENV = "MEDHORIZON_PLAN_STORE_MB"
LOOKAHEAD_ENV = "MEDHORIZON_LOOKAHEAD"
DEFAULT_AHEAD_DEPTH = 4
#: the share of the memory available at the start that the node's decoded frames may hold, all ranks together
NODE_MEMORY_SHARE = 0.25
#: what one process's look-ahead, and its plan store, hold at most by default (a 1,248-frame plan fits at every
#: model's size in docs/speed.md)
PROCESS_CAP_BYTES = 2 << 30
_MB = 1 << 20


def local_ranks(environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``(local rank, ranks on this node)`` as the launcher set them (``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``);
    ``(0, 1)`` without a launcher. A value that is not a count is the launcher's, not the user's: read as 1."""
    env = os.environ if environ is None else environ

    def count(name: str, default: int) -> int:
        try:
            return int(str(env.get(name, "")).strip())
        except ValueError:
            return default

    ranks = max(1, count("LOCAL_WORLD_SIZE", 1))
    return min(max(0, count("LOCAL_RANK", 0)), ranks - 1), ranks


def _process_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable``: free plus what the kernel can reclaim), or None where
    it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


@dataclass(frozen=True)
class NodeShare:
    """What one process may use for decoding: its decoder threads and the bytes of decoded frames it may hold."""

    rank: int            # on this node (LOCAL_RANK)
    ranks: int           # on this node (LOCAL_WORLD_SIZE)
    cores: int           # the cores this process may run on
    threads: int         # decoder threads per decode
    node_bytes: int      # the node's budget for decoded frames, all ranks together
    ahead_bytes: int     # this process's look-ahead
    store_bytes: int     # this process's plan store
    where: str           # where the node budget came from

    def line(self) -> str:
        return (f"rank {self.rank} of {self.ranks} on this node: {self.threads} decoder thread"
                f"{'s' if self.threads != 1 else ''}, {_gb(self.ahead_bytes)} look-ahead, {_gb(self.store_bytes)} "
                f"plan store ({self.cores} cores in view; node budget {_gb(self.node_bytes)}: {self.where})")


def node_share(environ: Mapping[str, str] | None = None, *, cores: int | None = None,
               memory: int | None = None) -> NodeShare:
    """This process's share of its node (see the module docstring). ``cores`` and ``memory`` (bytes available)
    default to this process's view; the settings come from ``environ`` (default ``os.environ``)."""
    rank, ranks = local_ranks(environ)
    cores = _process_cores() if cores is None else max(1, int(cores))
    threads = env_number(THREADS_ENV, None, minimum=1, integer=True, what="decoder threads per process",
                         environ=environ)
    if threads is None:
        threads = max(1, cores // ranks)
    node_mb = env_number(NODE_MEMORY_ENV, None, minimum=0, what="megabytes", environ=environ)
    if node_mb is not None:
        node_bytes, where = int(node_mb * _MB), f"${NODE_MEMORY_ENV}"
    else:
        memory = available_memory() if memory is None else memory
        if memory is None:  # unknown: each process as one process alone
            node_bytes, where = 2 * PROCESS_CAP_BYTES * ranks, "memory available unknown"
        else:
            node_bytes = int(memory * NODE_MEMORY_SHARE)
            where = f"{NODE_MEMORY_SHARE:.0%} of {_gb(memory)} available at the start"
    half = node_bytes // ranks // 2
    ahead_mb = env_number(AHEAD_MB_ENV, None, minimum=0, what="megabytes", environ=environ)
    store_mb = env_number(STORE_ENV, None, minimum=0, what="megabytes", environ=environ)
    ahead_bytes = int(ahead_mb * _MB) if ahead_mb is not None else min(PROCESS_CAP_BYTES, half)
    store_bytes = int(store_mb * _MB) if store_mb is not None else min(PROCESS_CAP_BYTES, half)
    return NodeShare(rank, ranks, cores, threads, node_bytes, ahead_bytes, store_bytes, where)


_SHARE: NodeShare | None = None
_LOCK = threading.Lock()


def process_share() -> NodeShare:
    """This process's share, computed on first use (the memory available then is the run's start) and kept;
    a rank under a launcher says it once on stderr (:func:`announce_share`)."""
    global _SHARE
    with _LOCK:
        if _SHARE is None:
            _SHARE = node_share()
            announce_share(_SHARE)
        return _SHARE


def check_settings(environ: Mapping[str, str] | None = None) -> None:
    """Parse every decode setting now (:class:`~medhorizon_tasks.core.settings.SettingError` naming the variable,
    the value and what it accepts), so that a run stops at its start, not at its first decode on a worker
    thread."""
    node_share(environ, cores=1, memory=0)
    lookahead_depth(environ)


def lookahead_depth(environ: Mapping[str, str] | None = None) -> int:
    """How many requests the look-ahead decodes ahead: ``$MEDHORIZON_LOOKAHEAD`` (0: none), default 4."""
    return env_number(LOOKAHEAD_ENV, DEFAULT_AHEAD_DEPTH, minimum=0, integer=True, what="requests decoded ahead",
                      environ=environ)


def announce_share(share: NodeShare, environ: Mapping[str, str] | None = None, stream=None) -> None:
    """Print ``share`` once on ``stream`` (stderr) when the process runs under a launcher (``LOCAL_WORLD_SIZE``
    or ``WORLD_SIZE`` set): a one-process run keeps its output as it was."""
    env = os.environ if environ is None else environ
    if not (env.get("LOCAL_WORLD_SIZE") or env.get("WORLD_SIZE")):
        return
    print(f"medhorizon: {share.line()}", file=stream or sys.stderr, flush=True)


def reset_process_share() -> None:
    """Forget the kept share (tests that change the environment)."""
    global _SHARE
    with _LOCK:
        _SHARE = None
