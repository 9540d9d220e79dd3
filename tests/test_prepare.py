"""prepare-frames: sharded, parallel filling of the frame cache; a later run decodes nothing."""

import json
import shutil

import pytest

from medhorizon_tasks.benchmarks.medhorizon.protocol import load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.jobs.prepare_frames import parse_plans, parse_shard, prepare_frames
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.video import frame_cache
from medhorizon_tasks.core.video.frame_cache import FrameCache


def test_plan_and_shard_specs(monkeypatch):
    s = parse_plans("cap512,frames32,oracle,hybrid64")
    assert [(x.mode, x.cap, x.frames, x.strategy) for x in s] == [
        ("visual", 512, None, "uniform"), ("visual", 64, 32, "uniform"), ("oracle", 64, None, "uniform"),
        ("visual", 64, 64, "hybrid")]
    with pytest.raises(DataError, match="'cap'"):
        parse_plans("cap")
    assert parse_shard("1/4") == (1, 4)
    with pytest.raises(DataError):
        parse_shard("4/4")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert parse_shard(None) == (1, 2)


def test_two_shards_fill_what_one_run_fills_and_a_hit_decodes_nothing(synthetic, tmp_path, monkeypatch):
    items = load_release(synthetic.data_path)[:30]
    settings = parse_plans("cap64,oracle")
    whole = FrameCache(tmp_path / "whole")
    s = prepare_frames(items, settings, synthetic.video_root, cache=whole, workers=2, progress=False)
    assert s["errors"] == {} and s["plans"] == 60
    shared = FrameCache(tmp_path / "shared")
    a = prepare_frames(items, settings, synthetic.video_root, cache=shared, shard=(0, 2), progress=False)
    b = prepare_frames(items, settings, synthetic.video_root, cache=shared, shard=(1, 2), progress=False)
    assert a["videos"] + b["videos"] == s["videos"] and a["plans"] + b["plans"] == 60
    names = lambda c: sorted(p.name for p in c.root.rglob("*.npy"))  # noqa: E731
    assert names(shared) == names(whole)

    def no_decoding(*args, **kwargs):
        raise AssertionError("decoded on a cache hit")

    monkeypatch.setattr(frame_cache, "decode_plan", no_decoding)
    monkeypatch.setenv("MEDHORIZON_FRAME_CACHE", str(shared.root))
    for it in items:
        for setting in settings:
            plan, frames = load_frames(it, setting, synthetic.video_root)
            assert len(frames) == len(plan)


def test_cli_reports_a_broken_video_and_prepares_the_rest(synthetic, tmp_path, capsys):
    recs = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()][:2]
    root = tmp_path / "videos"
    for r in recs:
        (root / r["video_path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(synthetic.video_root / r["video_path"], root / r["video_path"])
    (root / recs[0]["video_path"]).unlink()
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rc = main(["prepare-frames", "--data", str(data), "--video-root", str(root), "--cache", str(tmp_path / "c"),
               "--quiet"])
    out = capsys.readouterr()
    assert rc == 1
    assert f"item {recs[0]['qa'][0]['uid']}" in out.err and "not found" in out.err
    assert f"{len(recs[0]['qa'])} items with errors (video, or the cache could not be written)" in out.out
    assert main(["cache", "info", "--cache", str(tmp_path / "c"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == 1 and info["bytes"] > 0
    assert main(["cache", "clear", "--cache", str(tmp_path / "c")]) == 0
    assert "removed 1" in capsys.readouterr().out


def test_cli_on_a_full_disk_fails_the_plans_it_could_not_store(synthetic, tmp_path, capsys, monkeypatch):
    import errno
    import os

    recs = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()][:1]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cache = tmp_path / "cache"
    real_write = os.write

    def full_disk(fd, buf):  # ENOSPC for every file under the cache folder, as on a full file system
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(cache)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, buf)

    monkeypatch.setattr(os, "write", full_disk)
    rc = main(["prepare-frames", "--data", str(data), "--video-root", str(synthetic.video_root), "--cache",
               str(cache), "--plans", "cap8", "--quiet"])
    out = capsys.readouterr()
    assert rc == 1
    uids = [q["uid"] for q in recs[0]["qa"]]
    for uid in uids:
        assert f"error: item {uid}: frame cache {cache} not written (cannot write " in out.err
    assert out.err.count("No space left on device") == len(uids)
    assert f"{len(uids)} items with errors (video, or the cache could not be written)" in out.out
    assert FrameCache(cache).info()["entries"] == 0
    assert not [p for p in cache.rglob("*") if p.is_file()]  # no temporary file left behind
