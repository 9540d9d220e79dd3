"""What a file's identity costs (``core.file_identity``): the first read of a file, then a ``stat``.

Usage::

    python perf/file_identity_speed.py                # a 1 GiB file, median of 3
    python perf/file_identity_speed.py --mib 256 --repeat 5

A file of random bytes is written to a temporary folder (so it sits in the page cache: the hash, not the
disk, is timed; a disk reads at its own speed, usually slower). Timed, in one run:

* first identity: ``file_identity(path)`` with an empty memo (database and process memo), i.e. one read
  of every byte and XXH3-128 over it -- against the reference of the same run, ``hashlib.sha256`` over
  the same bytes in the same 4 MiB chunks (what ``videos --checksum`` computes), as a ratio;
* the identity of the unchanged file again: the memo answers (a ``stat`` and a dictionary look-up) --
  against a bare ``os.stat`` of the file, as a ratio;
* a new process asking for it: the memo database answers (``stat`` + one SQLite row), per file, after
  the connection is open;
* the old identity this replaces (size + sha256 of the first and last MiB): what it cost and why it was
  not enough is in the README (it cannot see a changed middle).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from medhorizon_tasks.core import file_identity as F  # noqa: E402


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _ends(path: Path) -> str:
    size = path.stat().st_size
    h = hashlib.sha256(f"{size}:".encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(1 << 20, size - (1 << 20)))
        h.update(f.read())
    return h.hexdigest()


def _time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[F.IDENTITY_ENV] = os.path.join(tmp, "ids.sqlite3")
        path = Path(tmp) / "video.bin"
        with open(path, "wb") as f:
            for _ in range(args.mib):
                f.write(os.urandom(1 << 20))
        size = path.stat().st_size

        def first():
            F._memo.clear()
            con = F._connection()
            if con is not None:
                con.execute("DELETE FROM identity")
            F.file_identity(path)

        t_first = _time(first, args.repeat)
        t_sha = _time(lambda: _sha256(path), args.repeat)
        F.file_identity(path)
        n = 20000
        t_again = _time(lambda: [F.file_identity(path) for _ in range(n)], args.repeat) / n
        t_stat = _time(lambda: [os.stat(path) for _ in range(n)], args.repeat) / n
        F._memo.clear()
        F.file_identity(path)  # the connection is open and the row is there
        t_db = _time(lambda: [F._memo.clear() or F.file_identity(path) for _ in range(2000)], args.repeat) / 2000
        t_ends = _time(lambda: _ends(path), args.repeat)
    gb = size / 1e9
    print(f"file: {size / 2**20:.0f} MiB in the page cache, median of {args.repeat}")
    print(f"first identity (read + XXH3-128): {t_first:.3f} s = {gb / t_first:.2f} GB/s; "
          f"sha256 of the same bytes: {t_sha:.3f} s = {gb / t_sha:.2f} GB/s; ratio sha256/identity "
          f"{t_sha / t_first:.1f}x")
    print(f"identity of the unchanged file again: {t_again * 1e6:.1f} us; bare os.stat: {t_stat * 1e6:.1f} us "
          f"(ratio {t_again / t_stat:.1f}x)")
    print(f"from the memo database (a new process): {t_db * 1e6:.0f} us per file")
    print(f"old identity (size + sha256 of first and last MiB): {t_ends * 1e3:.1f} ms, blind to the middle")


if __name__ == "__main__":
    main()
