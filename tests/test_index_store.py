"""One packet index per video file, kept on disk (core.video.index_store): reused by later processes and
runs, never served for other bytes, rebuilt when damaged."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import videos_for_tests as V
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core import file_identity as F
from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.core.video import decode
from medhorizon_tasks.core.video import index_store as S
from medhorizon_tasks.core.video.prepared import video_index

_MIB = 1 << 20


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh store and identity database; nothing remembered in this process."""
    root = tmp_path / "index"
    monkeypatch.setenv(S.INDEX_ENV, str(root))
    monkeypatch.setenv(F.IDENTITY_ENV, str(tmp_path / "ids.sqlite3"))
    F._memo.clear()
    S.forget()
    yield S.IndexStore(root)
    S.forget()


@pytest.fixture
def indexing(monkeypatch):
    """The files the packet pass reads, in order."""
    calls = []
    real = decode.index_video
    monkeypatch.setattr(decode, "index_video", lambda path, **kw: calls.append(Path(path)) or real(path, **kw))
    return calls


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """Files whose index is not trivial: B-frames with an mp4 edit list, MPEG-TS (seeks by decode time), and
    an mp4 cut with an edit list whose first packets are not frames."""
    d = tmp_path_factory.mktemp("index_store")
    mp4 = V.encode(d / "bframes.mp4", 120, gop=25, bframes=3)
    ts = V.encode(d / "clip.ts", 120, fmt="mpegts", gop=25, bframes=2)
    cut = V.remux(mp4, d / "cut.mp4", fmt="mp4", skip=3)
    return {"mp4": mp4, "ts": ts, "cut": cut}


def _plan(n):
    picks = sorted({0, 1, n // 3, n // 2, n // 2 + 1, n - 2, n - 1})
    return FramePlan(tuple(picks), tuple(float(i) for i in picks), "test")


def _same_index(a, b):
    assert (a.num_frames, a.time_base, a.fps, a.width, a.height, a.rotation, a.packet_slack, a.first_packet) == \
        (b.num_frames, b.time_base, b.fps, b.width, b.height, b.rotation, b.packet_slack, b.first_packet)
    for x, y in zip(a._keyframes()[:3] + (a.pts, a.key_positions), b._keyframes()[:3] + (b.pts, b.key_positions)):
        assert x.dtype == y.dtype == np.int64 and np.array_equal(x, y)


@pytest.mark.parametrize("kind", ["mp4", "ts", "cut"])
def test_an_index_reused_from_disk_gives_the_same_frames_as_a_fresh_one(videos, store, indexing, kind):
    path = videos[kind]
    built = S.stored_index(path)
    assert indexing == [path] and store.info()["entries"] == 1
    S.forget()  # as a new process: nothing in memory, the entry on disk
    loaded = S.stored_index(path)
    assert indexing == [path], "the second use read the stored index, not the file's packets"
    assert loaded is not built
    fresh = decode.index_video(path)  # a new packet pass, for the comparison
    _same_index(loaded, fresh)
    plan = _plan(fresh.num_frames)
    for workers in (1, 2):
        assert np.array_equal(decode.decode_plan(path, plan, index=loaded, workers=workers),
                              decode.decode_plan(path, plan, index=fresh, workers=workers))
    assert np.array_equal(decode.decode_plan(path, plan, index=loaded), V.sequential_frames(path)[list(plan.indices)])


def test_a_later_process_reuses_the_index_the_preflight_stored(videos, store, tmp_path):
    """The pre-flight's packet pass is the run's only one: another process (a task rank, the next run of a
    budget sweep) finds the index on disk and never reads the file's packets."""
    from medhorizon_tasks.benchmarks.videos import VideoRef, check_videos

    root = videos["mp4"].parent
    assert check_videos(root, [VideoRef("bframes.mp4", ("u1",))], progress=False) == []
    assert store.info()["entries"] == 1
    code = (
        "import sys, hashlib\n"
        "from pathlib import Path\n"
        "from medhorizon_tasks.core.video import decode\n"
        "def refuse(*a, **k): raise SystemExit('indexed again')\n"
        "decode.index_video = refuse\n"
        "from medhorizon_tasks.core.video.prepared import video_index\n"
        "from medhorizon_tasks.core.sampling import FramePlan\n"
        "p = Path(sys.argv[1]); idx = video_index(p, 'u1')\n"
        "plan = FramePlan(tuple(range(0, idx.num_frames, 7)), (), 't')\n"
        "print(hashlib.sha1(decode.decode_plan(p, plan, index=idx).tobytes()).hexdigest())\n")
    done = subprocess.run([sys.executable, "-c", code, str(videos["mp4"])], capture_output=True, text=True,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    n = decode.index_video(videos["mp4"]).num_frames
    truth = V.sequential_frames(videos["mp4"])[list(range(0, n, 7))]
    import hashlib

    assert done.stdout.split()[-1] == hashlib.sha1(np.ascontiguousarray(truth).tobytes()).hexdigest()


def _null_ts_packets(data: bytearray, start: int, length: int) -> None:
    """Replace whole MPEG-TS packets (188 bytes) with null packets: a valid stream of the same size."""
    null = bytes([0x47, 0x1F, 0xFF, 0x10]) + b"\xff" * 184
    start -= start % 188
    count = length // 188
    data[start:start + count * 188] = null * count


def test_a_file_changed_in_its_middle_only_is_indexed_again(tmp_path, store, indexing):
    """Same size, same first and last MiB, same mtime: only the middle differs. A key made of path, size,
    mtime and both ends would serve the old index (with frames the file no longer has)."""
    path = V.encode(tmp_path / "long.ts", 500, fmt="mpegts", size=(320, 240), gop=25, bframes=2)
    size = path.stat().st_size
    assert size > 3 * _MIB  # a middle outside both ends
    before = S.stored_index(path)
    data = bytearray(path.read_bytes())
    st = path.stat()
    _null_ts_packets(data, size // 2 - _MIB // 4, _MIB // 2)
    assert data[:_MIB] == path.read_bytes()[:_MIB] and data[-_MIB:] == path.read_bytes()[-_MIB:]
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)

    after = S.stored_index(path)
    assert indexing == [path, path], "the changed file was indexed again"
    assert after.num_frames < before.num_frames  # the old index would have been wrong
    _same_index(after, decode.index_video(path))
    assert store.info()["entries"] == 2  # one per content; the old one stays valid for a copy of the old bytes


def _entry(store, path):
    return store.entry(F.file_identity(path))


def _rewrite_npz(entry: Path, change) -> None:
    """The entry rewritten as a well-formed npz (valid CRCs) with ``change(header, arrays)`` applied."""
    with np.load(entry, allow_pickle=False) as npz:
        header = json.loads(str(npz["header"][()]))
        arrays = {k: npz[k] for k in npz.files if k != "header"}
    change(header, arrays)
    buf = io.BytesIO()
    np.savez(buf, header=np.array(json.dumps(header)), **arrays)
    entry.write_bytes(buf.getvalue())


def _flip_pts_byte(entry, store, other):
    """One byte inside the stored timestamps: the file still parses, only its CRC can tell."""
    data = bytearray(entry.read_bytes())
    with np.load(entry, allow_pickle=False) as npz:
        at = data.find(npz["pts"].tobytes())
    assert at > 0
    data[at + 8 * 50] ^= 0x01  # frame 50's timestamp moves by one tick: still plausible (sorted)
    entry.write_bytes(bytes(data))


def _truncate(entry, store, other):
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size * 2 // 3])


def _garbage(entry, store, other):
    entry.write_bytes(b"not an index at all\n" * 10)


def _empty(entry, store, other):
    entry.write_bytes(b"")


def _foreign(entry, store, other):
    """Another video's (valid) index put under this video's name."""
    entry.write_bytes(_entry(store, other).read_bytes())


def _another_build(entry, store, other):
    _rewrite_npz(entry, lambda h, a: h.update(build="00000000"))


def _unsorted(entry, store, other):
    def change(h, a):
        a["pts"] = a["pts"][::-1].copy()
    _rewrite_npz(entry, change)


def _too_few_frames(entry, store, other):
    def change(h, a):
        a["pts"] = a["pts"][:-5].copy()  # the header still says the full count
    _rewrite_npz(entry, change)


def _wrong_dtype(entry, store, other):
    def change(h, a):
        a["key_packets"] = a["key_packets"].astype(np.float64)
    _rewrite_npz(entry, change)


def _bad_rotation(entry, store, other):
    _rewrite_npz(entry, lambda h, a: h.update(rotation=45))


@pytest.mark.parametrize("damage", [_flip_pts_byte, _truncate, _garbage, _empty, _foreign, _another_build,
                                    _unsorted, _too_few_frames, _wrong_dtype, _bad_rotation],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_damaged_or_foreign_index_file_is_rebuilt_never_trusted(videos, store, indexing, damage):
    path, other = videos["mp4"], videos["ts"]
    S.stored_index(other)
    good = S.stored_index(path)
    entry = _entry(store, path)
    damage(entry, store, other)
    assert store.load(F.file_identity(path)) is None, "the damaged entry is not trusted"
    S.forget()
    rebuilt = S.stored_index(path)
    assert indexing == [other, path, path]
    _same_index(rebuilt, good)
    S.forget()
    _same_index(store.load(F.file_identity(path)), good)  # and the entry is whole again
    assert S.stored_index(path) is not None and indexing == [other, path, path]


def test_a_store_that_cannot_be_written_costs_a_warning_not_the_index(videos, tmp_path, monkeypatch, indexing):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(F.IDENTITY_ENV, str(tmp_path / "ids.sqlite3"))
    S.forget()
    S._unwritable.clear()
    with pytest.warns(RuntimeWarning, match="packet index store .* not written"):
        index = S.stored_index(videos["mp4"], store=S.IndexStore(blocker / "index"))
    _same_index(index, decode.index_video(videos["mp4"]))
    S.forget()


def test_a_missing_video_is_a_video_error_naming_the_item(tmp_path, store):
    with pytest.raises(VideoError) as err:
        video_index(tmp_path / "gone.mp4", "item-7")
    assert "video file not found" in str(err.value) and "item-7" in str(err.value)
    (tmp_path / "folder.mp4").mkdir()
    with pytest.raises(VideoError, match="not a regular file"):
        S.stored_index(tmp_path / "folder.mp4", uid="item-8")
    assert store.info()["entries"] == 0


def test_cache_command_reports_and_clears_the_index_store(videos, store, capsys):
    S.stored_index(videos["mp4"])
    S.stored_index(videos["ts"])
    assert main(["cache", "info", "--index", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["root"] == str(store.root) and info["entries"] == 2 and info["bytes"] > 0
    (store.root / "notes.npz").write_text("mine")  # not the store's: left alone, and said
    assert main(["cache", "clear", "--index"]) == 0
    out = capsys.readouterr().out
    assert "removed 2 entries" in out and "1 other file in its folder left alone (not written by the store)" in out
    assert store.info()["entries"] == 0 and [p.name for p in store.root.iterdir()] == ["notes.npz"]
    assert main(["cache", "clear", "--index"]) == 2  # nothing of the store's there: refused, nothing removed
    assert "is not a packet index store" in capsys.readouterr().err and (store.root / "notes.npz").exists()
