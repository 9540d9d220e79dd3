"""``videos check`` / ``videos link``: fake downloads of all eight sources in their own layouts (video files,
zip-part folders, a zip archive, JPEG and PNG frame folders), with missing, damaged and mismatched videos;
every case reported as what it is, nothing written outside the root, reruns resume, and the evaluation then
runs on the linked root."""

from __future__ import annotations

import errno
import json
import os
import shutil
import zipfile
from pathlib import Path

import av
import pytest

import upstream_fakes as F
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.videos import VideoCheckCache
from medhorizon_tasks.commands.main import main as run
from medhorizon_tasks.data import reconstruct as R
from medhorizon_tasks.data.reconstruct import place as P
from medhorizon_tasks.data.sources import SOURCES, source_for_path, source_named, target_id
from medhorizon_tasks.runs.preflight import preflight


def _from(up: dict[str, Path]) -> dict[str, list[Path]]:
    return {name: [path] for name, path in up.items()}


def _from_args(up: dict[str, Path]) -> list[str]:
    return [a for name, path in up.items() for a in ("--from", f"{name}={path}")]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reconstruct")
    return tmp, F.upstream(tmp), F.release(tmp)


@pytest.fixture(scope="module")
def linked(world):
    """The root after `videos check`, `videos link` and `videos link --extract` (their JSON reports)."""
    tmp, up, data = world
    root = tmp / "root"
    cache = ["--check-cache", str(tmp / "checks.json"), "--quiet"]
    reports = {}
    for name, extra in (("check", []), ("link", []), ("link --extract", ["--extract"])):
        report = tmp / f"{name.replace(' ', '_')}.json"
        cmd = name.split()[0]
        status = run(["videos", cmd, "--video-root", str(root), "--data", str(data), *_from_args(up), *cache, *extra,
                      "--out", str(report)])
        reports[name] = (status, json.loads(report.read_text()))
        if cmd == "check":
            assert not root.exists(), "check must write nothing"
    return root, reports


def _states(report: dict) -> dict[str, str]:
    return {v["video_path"]: v["state"] for v in report["items"]}


def _by_path(report: dict) -> dict[str, dict]:
    return {v["video_path"]: v for v in report["items"]}


GOOD = [vp for _, vp, _, _ in F.GOOD + F.MORE]


# ------------------------------------------------------------------ the source table

def test_every_source_is_described_as_data():
    assert [s.name for s in SOURCES] == ["AutoLaparo", "Galar", "GraSP", "MultiBypass", "PitVQA", "REAL-Colon",
                                         "TMVP", "US-Study"]
    for s in SOURCES:
        assert s.layouts and s.licence and s.obtain and s.access and s.packaging and s.citation, s.name
        assert s.name in s.how_to_get() and s.licence in s.how_to_get()
    assert {s.name for s in SOURCES if s.frames_only} == {"Galar", "REAL-Colon"}
    assert source_named("MultiBypass140") is source_named("strasbypass70") is source_named("MultiBypass")
    assert source_for_path("real_colon/002-010.mp4").name == "REAL-Colon"
    rc, mb = source_named("REAL-Colon"), source_named("MultiBypass")
    assert target_id(rc, "real_colon/002-010.mp4") == rc.layouts[0].match_name("002-010_frames") == "2-10"
    assert target_id(mb, "multibypass/bbp3.mp4") == mb.layouts[0].match_name("BBP03.mp4") == "B-3"


# ------------------------------------------------------------------ check, link, and what they report

def test_check_writes_nothing_and_says_where_each_video_is(world, linked):
    tmp, up, _ = world
    status, rep = linked[1]["check"]
    assert status == 1 and not rep["ok"]
    states = _states(rep)
    assert {vp for vp, s in states.items() if s == "found"} == set(GOOD) - {"multibypass/SBP07.mp4"} | {
        "real_colon/001-002.mp4", "autolaparo/02.mp4", "us_study/02-lus.mp4", "galar/005.mp4", "tmvp/002.mp4"}
    assert states["multibypass/SBP07.mp4"] == "archived"
    assert {vp for vp, s in states.items() if s == "missing"} == {"real_colon/003-001.mp4", "grasp/CASE053.mp4",
                                                                  "pitvqa/video_05.mp4"}
    missing = _by_path(rep)["real_colon/003-001.mp4"]
    assert "SSS-VVV_frames" in missing["reason"] and str(up["REAL-Colon"]) in missing["reason"]
    assert "figshare" in rep["sources"]["REAL-Colon"]["how_to_get"].lower()
    assert rep["sources"]["REAL-Colon"]["licence"] == "CC BY 4.0"
    assert rep["sources"]["MultiBypass"]["archives_not_unpacked"] == [str(up["MultiBypass"] / "multibypass03.zip")]


def test_link_reports_each_case_for_what_it_is(world, linked):
    _, rep = linked[1]["link"]
    by = _by_path(rep)
    assert by["multibypass/SBP07.mp4"]["state"] == "archived" and "--extract" in by["multibypass/SBP07.mp4"]["reason"]
    status, rep = linked[1]["link --extract"]
    assert status == 1
    by = _by_path(rep)
    assert {vp for vp, v in by.items() if v["state"] == "ok"} == set(GOOD)
    assert by["real_colon/003-001.mp4"]["state"] == "missing"
    damaged = by["real_colon/001-002.mp4"]
    assert damaged["state"] == "failed" and "001-002_7.jpg" in damaged["reason"] and "damaged" in damaged["reason"]
    mismatch = by["autolaparo/02.mp4"]
    assert mismatch["state"] == "unusable" and "the data says 30.0 s" in mismatch["reason"]
    assert "fetch it again" in mismatch["reason"]
    corrupt = by["us_study/02-lus.mp4"]
    assert corrupt["state"] == "unusable" and "cannot be opened" in corrupt["reason"]
    # the same three cases in the other layouts: a PNG frame folder, a JPEG frame folder, a video download
    png = by["galar/005.mp4"]
    assert png["state"] == "failed" and "frame_000011.PNG" in png["reason"] and "damaged" in png["reason"]
    short = by["tmvp/002.mp4"]
    assert short["state"] == "unusable" and "the file is 4.0 s long, the data says 8.0 s" in short["reason"]
    assert "fetch it again" in short["reason"]
    for vp, where in (("grasp/CASE053.mp4", "videos.tar.gz"), ("pitvqa/video_05.mp4", "PitVis videos")):
        assert by[vp]["state"] == "missing" and where in by[vp]["reason"], vp
    assert "frames are looked up by time" in " ".join(by["pitvqa/video_02.mp4"]["notes"])
    assert by["multibypass/SBP07.mp4"]["action"] == "extract"


def test_videos_are_linked_never_copied_and_frames_assembled(world, linked):
    tmp, up, _ = world
    root, _ = linked
    first = {v["video_path"]: v["action"] for v in linked[1]["link"][1]["items"]}
    for ds, vp, _, _ in F.GOOD + F.MORE:
        target = root / vp
        assert target.is_file() and not target.is_symlink()
        if source_named(ds).frames_only or ds in ("PitVQA", "TMVP"):
            assert first[vp] == "assemble"
        elif vp != "multibypass/SBP07.mp4":
            assert first[vp] == "hardlink" and target.stat().st_nlink >= 2
    assert os.path.samefile(root / "grasp/CASE041.mp4", up["GraSP"] / "videos" / "CASE041.mp4")
    manifest = json.loads((root / R.MANIFEST).read_text())
    assert manifest["real_colon/002-010.mp4"]["how"] == "assemble"
    assert not list(root.rglob(f"*{P._PARTIAL}"))


def test_assembled_videos_hold_the_upstream_frames_byte_for_byte(world, linked):
    tmp, up, _ = world
    root, _ = linked
    folder = up["REAL-Colon"] / "002-010_frames"
    with av.open(str(root / "real_colon/002-010.mp4")) as c:
        stream = c.streams.video[0]
        packets = [(p.pts * p.time_base, bytes(p)) for p in c.demux(stream) if p.size]
    assert stream.codec_context.name == "mjpeg"
    assert [b for _, b in packets] == [(folder / f"002-010_{i}.jpg").read_bytes() for i in range(F.N)]
    assert [float(t) for t, _ in packets] == [i / F.FPS for i in range(F.N)]


def test_the_evaluation_runs_on_the_linked_root(world, linked, tmp_path):
    root, _ = linked
    good = F.release(tmp_path, ("good", "more"))
    rep = preflight("medhorizon", good, root, progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    assert rep.ok, rep.message()
    seen = set()
    for item in load_release(good):
        if item.source in seen:
            continue
        seen.add(item.source)
        plan, frames = load_frames(item, FrameSetting(cap=4, max_side=None), root)
        assert frames.shape == (len(plan), F.SIZE[1], F.SIZE[0], 3) and len(plan) == 4
        rate = 1 if item.source == "PitVQA" else F.FPS  # PitVQA: its 1 FPS frames stand in for the video
        for t, frame in zip(plan.timestamps, frames):
            number = round(t * rate)
            assert abs(float(frame.mean()) - F.level(number)) < 8, (item.source, t)
    assert seen == {s.name for s in SOURCES}


@pytest.mark.e2e
def test_lmms_eval_runs_on_the_linked_root(world, linked, tmp_path):
    """The real lmms-eval CLI over the linked root: every item of every source gets its planned frames (the
    upstream frames: each is one grey level) and none is a video error."""
    from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
    from medhorizon_tasks.benchmarks.medhorizon import scoring

    root, _ = linked
    good = F.release(tmp_path, ("good", "more"))
    seen = tmp_path / "seen.jsonl"
    run = run_lmms_eval("medhorizon_needle", ["medhorizon_frames4"], tmp_path / "out", model_args=f"record_path={seen}",
                        env={"MEDHORIZON_DATA": str(good), "MEDHORIZON_VIDEO_ROOT": str(root)})
    items = load_release(good)
    records = scoring.score_predictions(items, scoring.read_predictions(run.samples["medhorizon_frames4"],
                                                                        [it.uid for it in items]))
    assert len(records) == len(items) == 2 * len(F.GOOD + F.MORE)
    assert all(r["status"] != "error" and r["error"] is None for r in records), [r["error"] for r in records]
    received = [json.loads(x) for x in seen.read_text().splitlines()]
    assert len(received) == len(items) and all(r["n_images"] == 4 for r in received)
    assert run.results["results"]["medhorizon_frames4"]["accuracy,none"] == 0.0, "grey frames carry no answer"


def test_a_rerun_resumes_without_redoing_anything(world, linked, monkeypatch):
    tmp, up, _ = world
    root, _ = linked
    data = F.release(tmp, ("good", "more"))  # what failed before (a damaged frame ...) would be tried again
    stamps = {p: p.stat().st_mtime_ns for p in root.rglob("*.mp4")}

    def boom(*a, **k):
        raise AssertionError("a placed video was made again")

    monkeypatch.setattr(P, "assemble_frames", boom)
    monkeypatch.setattr(P.os, "link", boom)
    rep = R.reconstruct("medhorizon", data, root, _from(up), write=True, extract=True, progress=False,
                        cache=VideoCheckCache(tmp / "checks.json"))
    by = {v.video_path: v for v in rep.videos}
    assert all(by[vp].state == "ok" and by[vp].action == "kept" for vp in GOOD)
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*.mp4")} == stamps


# ------------------------------------------------------------------ writes stay inside the root

def test_hostile_paths_never_lead_a_write_outside_the_root(tmp_path):
    up = tmp_path / "mb"
    for n in (1, 2, 3):
        F.encode_video(up / f"BBP0{n}.mp4", 10)
    scratch = F.encode_video(tmp_path / "scratch" / "SBP07.mp4", 10)
    with zipfile.ZipFile(up / "hostile.zip", "w") as z:
        z.write(scratch, "../../evil/SBP07.mp4")
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "sneaky").symlink_to(outside, target_is_directory=True)
    records = [F.record("a", "MultiBypass", "../escape/BBP01.mp4", 10, 5, [1]),
               F.record("b", "MultiBypass", str(tmp_path / "abs" / "BBP02.mp4"), 10, 5, [2]),
               F.record("c", "MultiBypass", "sneaky/BBP03.mp4", 10, 5, [3]),
               F.record("d", "MultiBypass", "multibypass/SBP07.mp4", 10, 5, [4])]
    data = F.write_release(tmp_path / "hostile.jsonl", records)
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, extract=True, progress=False,
                        cache=VideoCheckCache(tmp_path / "c.json"))
    states = {v.video_path: (v.state, v.reason) for v in rep.videos}
    assert states["../escape/BBP01.mp4"][0] == "unsafe" and "'..'" in states["../escape/BBP01.mp4"][1]
    assert states[str(tmp_path / "abs" / "BBP02.mp4")][0] == "unsafe"
    assert states["sneaky/BBP03.mp4"][0] == "unsafe" and "outside the video root" in states["sneaky/BBP03.mp4"][1]
    assert states["multibypass/SBP07.mp4"][0] == "ok"
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "escape").exists() and not (tmp_path / "abs").exists() and not (tmp_path / "evil").exists()
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        R.MANIFEST, R.MANIFEST + ".lock", "multibypass/SBP07.mp4"]


def test_a_folder_that_turns_into_a_symlink_out_is_caught_before_the_write(tmp_path, monkeypatch):
    up = tmp_path / "mb"
    F.encode_video(up / "BBP01.mp4", 10)
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "MultiBypass", "multibypass/BBP01.mp4", 10, 5, [1])])
    real_mkdir = Path.mkdir

    def swap(self, *a, **k):  # another process replaces the folder by a symlink out, just as it is made
        if self == root / "multibypass":
            self.symlink_to(outside, target_is_directory=True)
            return None
        return real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", swap)
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, progress=False,
                        cache=VideoCheckCache(tmp_path / "c.json"))
    assert rep.videos[0].state == "failed" and "outside the video root" in rep.videos[0].reason
    assert list(outside.iterdir()) == []


# ------------------------------------------------------------------ links, copies, force, checksums

def _one(tmp_path: Path, vp: str = "multibypass/BBP01.mp4", up: Path | None = None):
    up = up or tmp_path / "mb"
    F.encode_video(up / "BBP01.mp4", 10)
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "MultiBypass", vp, 10, 5, [1])])
    return up, data


def test_across_filesystems_it_says_so_and_copies_only_when_asked(tmp_path, monkeypatch):
    up, data = _one(tmp_path)
    root = tmp_path / "root"

    def exdev(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(P.os, "link", exdev)
    kw = dict(progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, **kw)
    assert rep.videos[0].state == "failed" and "--copy" in rep.videos[0].reason
    assert not (root / "multibypass/BBP01.mp4").exists()
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, mode="copy", **kw)
    target = root / "multibypass/BBP01.mp4"
    assert rep.ok and rep.videos[0].action == "copy"
    assert not os.path.samefile(target, up / "BBP01.mp4") and target.read_bytes() == (up / "BBP01.mp4").read_bytes()


def test_a_download_inside_the_root_is_linked_by_a_relative_symlink(tmp_path):
    root = tmp_path / "root"
    up, data = _one(tmp_path, up=root / "_downloads" / "mb")
    kw = dict(progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, **kw)
    target = root / "multibypass/BBP01.mp4"
    assert rep.ok and rep.videos[0].action == "symlink"
    assert target.is_symlink() and not os.path.isabs(os.readlink(target))
    shutil.move(str(root), str(tmp_path / "moved"))  # a relative link survives moving the whole root
    assert preflight("medhorizon", data, tmp_path / "moved", progress=False, cache=kw["cache"]).ok


def test_a_symlink_out_of_the_root_is_refused_with_the_reason(tmp_path):
    up, data = _one(tmp_path)
    rep = R.reconstruct("medhorizon", data, tmp_path / "root", {"MultiBypass": [up]}, write=True, mode="symlink",
                        progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    assert rep.videos[0].state == "failed" and "refused by every run" in rep.videos[0].reason


def test_a_failing_file_is_replaced_only_with_force(tmp_path):
    up, data = _one(tmp_path)
    root = tmp_path / "root"
    (root / "multibypass").mkdir(parents=True)
    (root / "multibypass/BBP01.mp4").write_bytes(b"half a download")
    kw = dict(progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, **kw)
    assert rep.videos[0].state == "unusable" and "--force" in rep.videos[0].reason
    assert (root / "multibypass/BBP01.mp4").read_bytes() == b"half a download"
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, force=True, **kw)
    assert rep.ok and os.path.samefile(root / "multibypass/BBP01.mp4", up / "BBP01.mp4")


def test_checksums_are_verified(tmp_path, capsys):
    up, data = _one(tmp_path)
    root = tmp_path / "root"
    kw = dict(progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up]}, write=True, compute_checksums=True, **kw)
    digest = rep.videos[0].sha256
    assert rep.ok and len(digest) == 64
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{'0' * 64}  multibypass/BBP01.mp4\n")
    rep = R.reconstruct("medhorizon", data, root, checksums=R.read_checksums(sums), **kw)
    assert rep.videos[0].state == "unusable" and "SHA-256" in rep.videos[0].reason
    sums.write_text(f"{digest}  ./multibypass/BBP01.mp4\n")
    assert R.reconstruct("medhorizon", data, root, checksums=R.read_checksums(sums), **kw).ok
    assert run(["videos", "check", "--video-root", str(root), "--data", str(data), "--checksums", str(sums), "--json",
                "--quiet", "--check-cache", str(tmp_path / "c.json")]) == 0
    assert json.loads(capsys.readouterr().out)["items"][0]["sha256"] == digest


def test_an_interrupted_assembly_leaves_no_half_video_and_the_rerun_finishes(tmp_path, monkeypatch):
    up = F.write_frames(tmp_path / "rc" / "002-010_frames", {i: f"002-010_{i}.jpg" for i in range(F.N)}, "JPEG")
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "REAL-Colon", "real_colon/002-010.mp4", F.N, F.FPS,
                                                           [1])])
    root = tmp_path / "root"
    real = P.read_bytes
    calls = []

    def interrupted(path):
        calls.append(path)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(P, "read_bytes", interrupted)
    kw = dict(progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    with pytest.raises(KeyboardInterrupt):
        R.reconstruct("medhorizon", data, root, {"REAL-Colon": [up.parent]}, write=True, **kw)
    assert [p.name for p in (root / "real_colon").iterdir()] == []
    monkeypatch.setattr(P, "read_bytes", real)
    rep = R.reconstruct("medhorizon", data, root, {"REAL-Colon": [up.parent]}, write=True, **kw)
    assert rep.ok and rep.videos[0].action == "assemble"


def test_check_without_downloads_names_the_missing_and_how_to_get_them(tmp_path, capsys):
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "Galar", "galar/003.mp4", F.N, F.FPS, [1])])
    assert run(["videos", "check", "--video-root", str(tmp_path / "root"), "--data", str(data), "--quiet", "--check-cache",
                str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "galar/003.mp4 (items 1): missing" in out and "no download of Galar was given" in out
    assert "Figshare+" in out and 'videos link --video-root ROOT --from "Galar=FOLDER"' in out


def test_an_unknown_source_name_is_a_usage_error(tmp_path, capsys):
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "Galar", "galar/003.mp4", F.N, F.FPS, [1])])
    assert run(["videos", "check", "--video-root", str(tmp_path), "--data", str(data), "--from",
                f"Galer={tmp_path}"]) == 2
    assert "unknown source 'Galer'" in capsys.readouterr().err


def test_a_damaged_zip_part_and_odd_frames_are_named(tmp_path):
    scratch = F.encode_video(tmp_path / "scratch" / "SBP07.mp4", 10)
    up = tmp_path / "mb"
    up.mkdir()
    with zipfile.ZipFile(up / "multibypass03.zip", "w", compression=zipfile.ZIP_STORED) as z:
        z.write(scratch, "StrasBypass70/videos/SBP07.mp4")
    raw = bytearray((up / "multibypass03.zip").read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # inside the member: its CRC no longer matches
    (up / "multibypass03.zip").write_bytes(bytes(raw))
    frames = F.write_frames(tmp_path / "rc" / "002-010_frames", {i: f"002-010_{i}.jpg" for i in range(F.N)}, "JPEG")
    from PIL import Image

    Image.new("RGB", (32, 24)).save(frames / "002-010_5.jpg", quality=95)
    data = F.write_release(tmp_path / "r.jsonl", [
        F.record("a", "MultiBypass", "multibypass/SBP07.mp4", 10, 5, [1]),
        F.record("b", "REAL-Colon", "real_colon/002-010.mp4", F.N, F.FPS, [2])])
    root = tmp_path / "root"
    rep = R.reconstruct("medhorizon", data, root, {"MultiBypass": [up], "REAL-Colon": [frames.parent]}, write=True,
                        extract=True, progress=False, cache=VideoCheckCache(tmp_path / "c.json"))
    by = {v.video_path: v for v in rep.videos}
    assert by["multibypass/SBP07.mp4"].state == "failed" and "download that zip part again" in \
        by["multibypass/SBP07.mp4"].reason
    assert by["real_colon/002-010.mp4"].state == "failed" and "002-010_5.jpg is 32x24" in \
        by["real_colon/002-010.mp4"].reason
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == []
