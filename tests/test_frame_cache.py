"""The on-disk frame cache: bit-exact round trips, keys, concurrent writers, damaged entries."""

import json
import multiprocessing
import os
import shutil
from fractions import Fraction

import av
import numpy as np
import pytest

import medhorizon_tasks.core.video.frame_cache as fc
from medhorizon_tasks.core.sampling import FpsCap, FramePlan, plan_frames
from medhorizon_tasks.core.video.decode import decode_plan, index_video
from medhorizon_tasks.core.video.frame_cache import FrameCache, cached_decode


def _plan(indices, policy="test"):
    return FramePlan(tuple(indices), tuple(i / 25 for i in indices), policy)


def _frames(n, seed=0, shape=(48, 64)):
    return np.random.default_rng(seed).integers(0, 256, (n, *shape, 3), dtype=np.uint8)


@pytest.fixture()
def video(tmp_path):
    """Stand-in video: the cache only reads its bytes (3 MiB, so head and tail hashing both apply)."""
    path = tmp_path / "v.mp4"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 3 << 20, dtype=np.uint8).tobytes())
    return path


@pytest.fixture()
def clip(tmp_path):
    path = tmp_path / "clip.mp4"
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(25), options={"g": "25", "bf": "2"})
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for i in range(100):
            img = np.full((48, 64, 3), (i * 5) % 256, dtype=np.uint8)
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts = i
            c.mux(s.encode(f))
        c.mux(s.encode(None))
    return path


def test_round_trip_is_bit_exact_and_sharded(tmp_path, video):
    cache = FrameCache(tmp_path / "cache")
    plan, frames = _plan([0, 5, 9]), _frames(3)
    assert cache.get(video, plan, None) is None
    entry = cache.put(video, plan, None, frames)
    key = cache.key(video, plan, None)
    assert entry == tmp_path / "cache" / key[:2] / f"{key}.npy"
    sidecar = json.loads(entry.with_suffix(".json").read_text())
    assert sidecar["policy"] == "test" and sidecar["shape"] == [3, 48, 64, 3] and sidecar["video"] == str(video.resolve())
    got = cache.get(video, plan, None)
    assert got.dtype == np.uint8 and np.array_equal(got, frames)


def test_default_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(fc.CACHE_ENV, str(tmp_path / "env"))
    assert FrameCache().root == tmp_path / "env"
    monkeypatch.delenv(fc.CACHE_ENV)
    assert FrameCache().root.parts[-3:] == (".cache", "medhorizon_tasks", "frames")


def test_key_depends_on_plan_size_and_content_not_on_path_or_mtime(tmp_path, video):
    cache = FrameCache(tmp_path / "cache")
    base = cache.key(video, _plan([0, 5]), None)
    assert cache.key(video, _plan([0, 6]), None) != base
    assert cache.key(video, _plan([0, 5]), 32) != base
    assert cache.key(video, _plan([0, 5], policy="other label"), None) == base  # only the indices count

    copy = tmp_path / "elsewhere" / "copy.mp4"
    copy.parent.mkdir()
    shutil.copyfile(video, copy)  # new path, new mtime, same bytes: another machine's copy
    assert cache.key(copy, _plan([0, 5]), None) == base

    for offset in (10, 3 << 19, (3 << 20) - 10):  # a changed byte anywhere changes the key, the middle too
        data = bytearray(video.read_bytes())
        data[offset] ^= 0xFF
        changed = tmp_path / f"changed{offset}.mp4"
        changed.write_bytes(bytes(data))
        assert cache.key(changed, _plan([0, 5]), None) != base
    # rewritten in place with the same size, ends and mtime (a repaired middle, kept by cp -p / rsync -a)
    st = video.stat()
    data = bytearray(video.read_bytes())
    data[3 << 19] ^= 0xFF
    video.write_bytes(bytes(data))
    os.utime(video, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert video.stat().st_size == st.st_size and video.stat().st_mtime_ns == st.st_mtime_ns
    assert cache.key(video, _plan([0, 5]), None) != base


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "wrong_shape"])
def test_damaged_entry_is_a_miss_and_is_replaced(tmp_path, video, damage):
    cache = FrameCache(tmp_path / "cache")
    plan, frames = _plan([1, 2]), _frames(2)
    entry = cache.put(video, plan, None, frames)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        entry.write_bytes(b"not an array" * 100)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        np.save(entry, _frames(3))
    assert cache.get(video, plan, None) is None
    cache.put(video, plan, None, frames)
    assert np.array_equal(cache.get(video, plan, None), frames)


def test_info_and_clear(tmp_path, video):
    cache = FrameCache(tmp_path / "cache")
    assert cache.info() == {"root": str(tmp_path / "cache"), "entries": 0, "bytes": 0}
    for i in range(3):
        cache.put(video, _plan([i]), None, _frames(1, seed=i))
    key = "ab" + "0" * 38
    (cache.root / "ab").mkdir()
    (cache.root / "ab" / f".{key}.npy.123.0badcafe.tmp").write_bytes(b"partial")  # a writer that was killed
    (cache.root / "ab" / "notes.txt").write_text("mine")  # not the cache's: never counted, never removed
    (cache.root / "cd").mkdir()
    (cache.root / "cd" / f"{key}.npy").write_bytes(b"x")  # a key's name outside the key's shard: not an entry
    info = cache.info()
    assert info["entries"] == 3 and info["bytes"] > 3 * 48 * 64 * 3
    assert cache.clear() == {"root": str(cache.root), "entries": 3, "files": 7, "kept": 2, "marked": True}
    assert cache.info()["entries"] == 0 and cache.info()["bytes"] == 0
    assert cache.get(video, _plan([0]), None) is None
    assert (cache.root / "ab" / "notes.txt").read_text() == "mine" and (cache.root / "cd" / f"{key}.npy").exists()
    assert (cache.root / fc.MARK).exists(), "the folder stays marked as a cache"


def _cache_command(*argv):
    import contextlib
    import io

    from medhorizon_tasks.commands.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["cache", *argv])
    return status, out.getvalue(), err.getvalue()


def test_cache_clear_on_an_ordinary_folder_deletes_nothing_and_says_so(tmp_path, video):
    """`cache clear --cache DIR` on a folder the cache did not write (a typo, the wrong variable)."""
    folder = tmp_path / "my_project"
    files = {"ab/notes.txt": "notes", "cd/data.npy": "array", "ef/" + "ef" + "1" * 38 + ".txt": "x", "top.json": "{}"}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    status, out, err = _cache_command("clear", "--cache", str(folder))
    assert status == 2 and out == ""
    assert err.strip() == (f"medhorizon-tasks cache: error: {folder} is not a frame cache (no {fc.MARK}, no cache "
                           f"entries): nothing removed; 3 other files in its shard folders left alone (not written "
                           f"by the cache)")
    assert {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()} == files

    # a real cache in that same folder: its entries go, the user's files stay
    FrameCache(folder).put(video, _plan([0]), None, _frames(1))
    status, out, err = _cache_command("clear", "--cache", str(folder))
    assert status == 0 and err == ""
    assert out.strip() == (f"removed 1 entry (2 files) from {folder}; 3 other files in its shard folders left alone "
                           f"(not written by the cache)")
    assert {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()
            if p.name != fc.MARK} == files


def test_put_rejects_frames_that_do_not_match_the_plan(tmp_path, video):
    with pytest.raises(ValueError, match="expected"):
        FrameCache(tmp_path).put(video, _plan([0, 1]), None, _frames(3))


# ----------------------------------------------------------------- concurrency

_SIZE = (240, 320)  # ~0.5 MB per frame, so that writes take long enough to overlap


def _writer(root, video, worker, rounds):
    cache = FrameCache(root)
    for r in range(rounds):
        cache.put(video, _plan([0, 1, 2, 3]), None, _frames(4, seed=0, shape=_SIZE))  # everyone: same key
        cache.put(video, _plan([100 + worker]), None, _frames(1, seed=100 + worker, shape=_SIZE))  # own key
    return worker


def _reader(root, video, rounds):
    """Reads the shared entry while it is being rewritten: it must be absent or complete, never partial."""
    cache, expected, seen = FrameCache(root), _frames(4, seed=0, shape=_SIZE), 0
    for _ in range(rounds):
        got = cache.get(video, _plan([0, 1, 2, 3]), None)
        if got is not None:
            assert np.array_equal(got, expected)
            seen += 1
    return seen


def test_concurrent_writers_leave_valid_entries(tmp_path, video):
    root = tmp_path / "cache"
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(5) as pool:
        reader = pool.apply_async(_reader, (root, video, 200))
        writers = [pool.apply_async(_writer, (root, video, w, 5)) for w in range(4)]
        assert sorted(w.get(timeout=120) for w in writers) == [0, 1, 2, 3]
        reader.get(timeout=120)
    cache = FrameCache(root)
    assert np.array_equal(cache.get(video, _plan([0, 1, 2, 3]), None), _frames(4, seed=0, shape=_SIZE))
    for w in range(4):
        assert np.array_equal(cache.get(video, _plan([100 + w]), None), _frames(1, seed=100 + w, shape=_SIZE))
    assert cache.info()["entries"] == 5
    assert not list(root.rglob("*.tmp"))  # no temporary file left behind


# ----------------------------------------------------------------- cached_decode

def test_cached_decode_decodes_once_then_hits(tmp_path, clip, monkeypatch):
    cache = FrameCache(tmp_path / "cache")
    plan = plan_frames(index_video(clip).meta(), FpsCap(1.0, 3))
    first = cached_decode(clip, plan, max_side=32, cache=cache)
    assert np.array_equal(first, decode_plan(clip, plan, max_side=32))

    def no_decoding(*args, **kwargs):
        raise AssertionError("decode_plan called on a cache hit")

    monkeypatch.setattr(fc, "decode_plan", no_decoding)
    again = cached_decode(clip, plan, max_side=32, cache=cache)
    assert np.array_equal(again, first)
    with pytest.raises(AssertionError):  # a different size is a different entry
        cached_decode(clip, plan, max_side=None, cache=cache)


def test_cached_decode_reports_a_missing_video_like_decode_plan(tmp_path):
    from medhorizon_tasks.core.errors import VideoError

    with pytest.raises(VideoError, match="item 4.*not found"):
        cached_decode(tmp_path / "gone.mp4", _plan([0]), uid="4", cache=FrameCache(tmp_path / "cache"))


def test_unwritable_cache_only_warns(tmp_path, clip, monkeypatch):
    cache = FrameCache(tmp_path / "cache")

    def fail(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(fc, "_write_atomically", fail)
    with pytest.warns(RuntimeWarning, match="not written"):
        frames = cached_decode(clip, _plan([0, 50]), cache=cache)
    assert frames.shape == (2, 48, 64, 3)


def test_strict_cache_that_cannot_be_written_raises_naming_the_item(tmp_path, clip, monkeypatch):
    import errno
    import os

    from medhorizon_tasks.core.errors import MedHorizonError

    cache = FrameCache(tmp_path / "cache", strict=True)
    real_write = os.write

    def full_disk(fd, buf):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(cache.root)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, buf)

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(fc.CacheWriteError) as ei:
        cached_decode(clip, _plan([0, 50]), uid="7", cache=cache)
    assert isinstance(ei.value, MedHorizonError)
    assert str(ei.value).startswith(f"item 7: frame cache {cache.root} not written (cannot write {cache.root}/")
    assert str(ei.value).endswith(": No space left on device)")
    assert not [p for p in cache.root.rglob("*") if p.is_file()]  # the temporary file is gone
    with pytest.warns(RuntimeWarning, match="No space left on device"):  # a plain cache on that disk only warns
        frames = cached_decode(clip, _plan([0, 50]), cache=FrameCache(cache.root))
    assert frames.shape == (2, 48, 64, 3)
