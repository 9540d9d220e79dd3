"""One file identity (core.file_identity): all of a file's bytes, remembered while the file is unchanged."""

import os
import shutil
import subprocess
import sys

import pytest

from medhorizon_tasks.core import file_identity as F


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = tmp_path / "ids.sqlite3"
    monkeypatch.setenv(F.IDENTITY_ENV, str(path))
    F._memo.clear()
    return path


def _count_reads(monkeypatch):
    reads = []
    real = F._digest
    monkeypatch.setattr(F, "_digest", lambda p: reads.append(p) or real(p))
    return reads


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_the_same_bytes_anywhere_are_the_same_file(tmp_path, db):
    a = _write(tmp_path / "a.mp4", os.urandom(3 << 20))
    b = tmp_path / "sub" / "b.mp4"
    b.parent.mkdir()
    shutil.copy2(a, b)
    os.link(a, tmp_path / "hard.mp4")
    assert F.file_identity(a) == F.file_identity(b) == F.file_identity(tmp_path / "hard.mp4")
    assert F.file_identity(a).startswith("xxh128:")


def test_a_changed_middle_is_another_file_even_with_size_ends_and_mtime_kept(tmp_path, db):
    data = bytearray(os.urandom(5 << 20))
    a = _write(tmp_path / "a.mp4", bytes(data))
    before = F.file_identity(a)
    st = a.stat()
    data[len(data) // 2] ^= 0xFF  # one byte in the middle: same size, same first and last MiB
    a.write_bytes(bytes(data))
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p / rsync -a keep it
    assert a.stat().st_size == st.st_size and a.stat().st_mtime_ns == st.st_mtime_ns
    assert F.file_identity(a) != before
    assert not F.same_file(a, before)


def test_an_unchanged_file_is_not_read_again_in_this_or_another_process(tmp_path, db, monkeypatch):
    a = _write(tmp_path / "a.mp4", os.urandom(1 << 20))
    code = ("import sys; from medhorizon_tasks.core.file_identity import file_identity; "
            "print(file_identity(sys.argv[1]))")
    env = {**os.environ, F.IDENTITY_ENV: str(db)}
    first = subprocess.run([sys.executable, "-c", code, str(a)], capture_output=True, text=True, env=env,
                           check=True).stdout.strip()
    reads = _count_reads(monkeypatch)
    assert F.file_identity(a) == first and reads == []  # from the database
    assert F.file_identity(a) == first and reads == []  # from the process memo
    os.utime(a)  # touched: read once more, same identity
    assert F.file_identity(a) == first and len(reads) == 1


def test_a_file_written_while_it_is_hashed_is_hashed_again(tmp_path, db, monkeypatch):
    a = _write(tmp_path / "a.mp4", b"old" * 1000)
    real = F._digest
    calls = []

    def digest_then_write(p):
        out = real(p)
        if not calls:
            a.write_bytes(b"new" * 1000)
        calls.append(p)
        return out

    monkeypatch.setattr(F, "_digest", digest_then_write)
    got = F.file_identity(a)
    assert len(calls) == 2
    monkeypatch.setattr(F, "_digest", real)
    F._memo.clear()
    assert got == F.file_identity(a)  # the new bytes'


def test_an_unusable_database_costs_reads_never_answers(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(F.IDENTITY_ENV, str(blocker / "ids.sqlite3"))  # a folder that cannot be made
    F._memo.clear()
    a = _write(tmp_path / "a.mp4", os.urandom(1000))
    with pytest.warns(UserWarning, match="this process only"):
        ident = F.file_identity(a)
    a.write_bytes(os.urandom(1000))
    assert F.file_identity(a) != ident


def test_a_missing_file_raises_and_is_not_the_same_file(tmp_path, db):
    with pytest.raises(OSError):
        F.file_identity(tmp_path / "nope.mp4")
    assert not F.same_file(tmp_path / "nope.mp4", "xxh128:00")


def test_a_database_locked_by_another_process_is_given_up_with_one_warning(tmp_path, db):
    """Issue 32: another process holding the database's write lock made every new file wait the 60 s busy
    timeout (a 340-video root: hours). After a short wait, this process remembers in its own memory."""
    import warnings

    F._db.pop(str(db), None)
    assert F.file_identity(_write(tmp_path / "first.mp4", b"first")).startswith("xxh128:")  # the database made
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"con = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "con.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        files = [_write(tmp_path / f"v{i}.mp4", os.urandom(1 << 16)) for i in range(3)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ids = [F.file_identity(f) for f in files]
            assert [F.file_identity(f) for f in files] == ids, "remembered in this process's memory"
        said = [str(w.message) for w in caught]
        assert len(said) == 1 and "locked by another process" in said[0], said
        assert F._db[str(db)] is None, "given up for the rest of the process: no wait per file"
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
        F._db.pop(str(db), None)
