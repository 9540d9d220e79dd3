"""Pre-flight: the data load, the video root exists, every video is present, readable and matches the data."""

import json
import shutil

import pytest

from medhorizon_tasks.commands.main import main
from medhorizon_tasks.runs import preflight as P


def _subset(synthetic, tmp_path, n=3, drop=()):
    """A release of ``n`` short synthetic videos copied under ``tmp_path/videos``; videos in ``drop`` deleted."""
    records = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    short = [r for r in records if r["duration_seconds"] < 600][:n]
    root = tmp_path / "videos"
    for i, r in enumerate(short):
        dst = root / r["video_path"]
        dst.parent.mkdir(parents=True, exist_ok=True)
        if i not in drop:
            shutil.copy(synthetic.video_root / r["video_path"], dst)
    data = tmp_path / "release.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in short))
    return data, root, short


def test_a_complete_release_passes(synthetic, tmp_path):
    data, root, recs = _subset(synthetic, tmp_path)
    rep = P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(tmp_path / "c.json"))
    assert rep.ok and rep.n_videos == 3 and rep.n_items == sum(len(r["qa"]) for r in recs)
    assert "all present, readable and matching the data" in rep.message()


def test_missing_and_mismatched_videos_are_listed_with_their_items_and_the_fix(synthetic, tmp_path):
    data, root, recs = _subset(synthetic, tmp_path, drop=(0,))
    recs[1]["duration_seconds"] = recs[1]["duration_seconds"] * 2  # the file is half as long as the data say
    recs[1]["num_frames"] = recs[1]["num_frames"] * 2
    data.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rep = P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(tmp_path / "c.json"))
    assert not rep.ok and rep.fatal is None
    by_path = {p.video_path: p for p in rep.problems}
    assert set(by_path) == {recs[0]["video_path"], recs[1]["video_path"]}
    assert "video file not found" in by_path[recs[0]["video_path"]].reason
    assert "the data says" in by_path[recs[1]["video_path"]].reason
    assert set(by_path[recs[0]["video_path"]].uids) == {str(q["uid"]) for q in recs[0]["qa"]}
    msg = rep.message()
    assert "2 of 3 videos cannot be used" in msg and "MEDHORIZON_ALLOW_VIDEO_ERRORS=1" in msg
    assert "MEDHORIZON_VIDEO_ROOT" in msg


def test_a_wrong_video_root_and_unset_data_are_fatal(synthetic, tmp_path, monkeypatch):
    data, root, _ = _subset(synthetic, tmp_path)
    rep = P.preflight("medhorizon", data, tmp_path / "nowhere", progress=False)
    assert rep.fatal and "does not exist" in rep.fatal and "MEDHORIZON_VIDEO_ROOT" in rep.fatal
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    rep = P.preflight("medhorizon", progress=False)
    assert rep.fatal == "MEDHORIZON_DATA is not set: set it to the MedHorizon release (JSONL, JSON or a dataset folder)"


def test_all_videos_missing_hints_at_the_video_root(synthetic, tmp_path):
    data, root, _ = _subset(synthetic, tmp_path, drop=(0, 1, 2))
    rep = P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(tmp_path / "c.json"))
    assert "No video was found: is MEDHORIZON_VIDEO_ROOT=" in rep.message()


def test_bad_data_is_fatal_naming_the_problem(tmp_path):
    bad = tmp_path / "release.jsonl"
    bad.write_text('{"key": 1}\n')
    rep = P.preflight("medhorizon", bad, tmp_path, progress=False)
    assert rep.fatal and "cannot be used" in rep.fatal and "line 1" in rep.fatal


def test_results_are_cached_by_file_identity(synthetic, tmp_path, monkeypatch):
    data, root, recs = _subset(synthetic, tmp_path)
    cache_file = tmp_path / "c.json"
    P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(cache_file))
    calls = []
    import medhorizon_tasks.core.video.decode as video
    import medhorizon_tasks.core.video.index_store as store

    real, real_stored, checks = video.index_video, store.stored_index, []
    monkeypatch.setattr(video, "index_video", lambda *a, **k: calls.append(a) or real(*a, **k))
    monkeypatch.setattr(store, "stored_index", lambda *a, **k: checks.append(a) or real_stored(*a, **k))
    assert P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(cache_file)).ok
    assert calls == checks == [], "unchanged files are not checked again"
    touched = root / recs[0]["video_path"]
    touched.write_bytes(touched.read_bytes())  # same bytes, new modification time: the same video
    moved = tmp_path / "elsewhere"
    shutil.copytree(root, moved)  # the same bytes under another root: the same videos
    assert P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(cache_file)).ok
    assert P.preflight("medhorizon", data, moved, progress=False, cache=P.VideoCheckCache(cache_file)).ok
    assert calls == checks == [], "the same bytes (touched, or under another root): the same videos"
    _overwrite_keeping_size_and_mtime(touched, bytearray(touched.read_bytes()), at=touched.stat().st_size // 2)
    assert P.preflight("medhorizon", data, root, progress=False, cache=P.VideoCheckCache(cache_file)).ok
    assert len(calls) == len(checks) == 1, "one byte changed in the middle: checked (and indexed) again"


def _overwrite_keeping_size_and_mtime(path, data: bytearray | None = None, at: int | None = None):
    """``path`` rewritten with the same size and its mtime kept, as ``cp -p`` / ``rsync -a`` leave it: random
    bytes, or ``data`` with the byte at ``at`` flipped."""
    import os

    st = path.stat()
    if data is None:
        data = bytearray(os.urandom(st.st_size))
    else:
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize("command", ["check", "videos check"])
def test_a_same_size_same_mtime_overwrite_does_not_pass_as_readable(command, synthetic, tmp_path, monkeypatch,
                                                                    capsys):
    """Issue 21: random bytes of the same size with the mtime kept passed `check` and `videos check` as
    "all present, readable" (their cache was keyed by path, size and mtime)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the commands' default check cache
    data, root, recs = _subset(synthetic, tmp_path)
    argv = (["check", "--data", str(data), "--video-root", str(root), "--quiet"] if command == "check" else
            ["videos", "check", "--data", str(data), "--video-root", str(root), "--no-decode", "--quiet"])
    assert main(argv) == 0, capsys.readouterr()
    capsys.readouterr()
    victim = root / recs[1]["video_path"]
    _overwrite_keeping_size_and_mtime(victim)
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert recs[1]["video_path"] in out and "all present" not in out
    assert recs[0]["video_path"] not in out.replace(str(root), "")


def test_check_command_exit_codes_and_json(synthetic, tmp_path, capsys):
    data, root, recs = _subset(synthetic, tmp_path, drop=(2,))
    assert main(["check", "--data", str(data), "--video-root", str(root), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and [p["video_path"] for p in out["problems"]] == [recs[2]["video_path"]]
    assert main(["check", "--data", str(data), "--video-root", str(tmp_path / "none"), "--quiet"]) == 2
    shutil.copy(synthetic.video_root / recs[2]["video_path"], root / recs[2]["video_path"])
    assert main(["check", "--data", str(data), "--video-root", str(root), "--quiet"]) == 0


@pytest.mark.parametrize("benchmark", ["sureon", "surghi"])
def test_sureon_and_surghi_samples_pass(benchmark, tmp_path):
    if benchmark == "sureon":
        from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

        s = build_sureon_sample(tmp_path / "s")
        data, root = s.data_path, s.video_root
    else:
        from medhorizon_tasks.data.synthetic.surghi import build_surghi_sample

        s = build_surghi_sample(tmp_path / "s")
        data, root = s.annotations_path, s.video_root
    rep = P.preflight(benchmark, data, root, progress=False, cache=P.VideoCheckCache(tmp_path / "c.json"))
    assert rep.ok, rep.message()
    assert rep.n_videos >= 3
