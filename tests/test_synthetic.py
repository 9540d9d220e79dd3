"""Tests for the synthetic MedHorizon benchmark and its visual code."""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.data.synthetic import layout as L
from medhorizon_tasks.data.synthetic import medhorizon as S
from medhorizon_tasks.data.synthetic import questions as Q
from medhorizon_tasks.data.synthetic import video_writer as V
from medhorizon_tasks.data.synthetic.visual_code import (
    BackgroundGenerator,
    background_frame,
    decode_code,
    encode_code,
)

TASKS = {
    "PR",
    "SD",
    "RL",
    "BPQ",
    "LLS",
    "Site",
    "Hist",
    "Size",
    "IR",
    "WR",
    "RSR",
    "CPR",
    "LA",
}
SOURCES = {
    "AutoLaparo",
    "Galar",
    "GraSP",
    "MultiBypass",
    "PitVQA",
    "REAL-Colon",
    "TMVP",
    "US-Study",
}
LETTERS = "ABCD"


@pytest.fixture(scope="module")
def built(synthetic_build):
    return synthetic_build


@pytest.fixture(scope="module")
def records(built):
    return built[0].records()


def _decode_all(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def _long(records):
    return [r for r in records if r["duration_seconds"] >= 3600]


# --------------------------------------------------------------------------- build


def test_build_size_and_manifest(built, capsys):
    # the build time is printed, not asserted: it depends on the machine's load, not on this code
    bench, seconds = built
    manifest = json.loads(bench.manifest_path.read_text())
    size = sum(p.stat().st_size for p in bench.root.rglob("*") if p.is_file())
    with capsys.disabled():
        print(
            f"\n[synthetic] build {seconds:.1f}s, {size / 1e6:.1f} MB, codec {manifest['codec']}, "
            f"{manifest['num_frames']} frames"
        )
    assert size < 40e6
    assert (
        manifest["generator_version"] == L.GENERATOR_VERSION and manifest["seed"] == 0
    )
    assert manifest["num_videos"] == 16 and manifest["num_questions"] == sum(
        len(r["qa"]) for r in bench.records()
    )


def test_jsonl_deterministic(built):
    bench, _ = built
    a = Q.jsonl_bytes(Q.plan_synthetic(0))
    assert a == Q.jsonl_bytes(Q.plan_synthetic(0))
    assert a == bench.data_path.read_bytes()
    assert a != Q.jsonl_bytes(Q.plan_synthetic(1))


def test_cache_hit_builds_and_rewrites_nothing(built, monkeypatch):
    bench, _ = built

    def no_build(*args, **kwargs):
        raise AssertionError("a valid build was rebuilt")

    monkeypatch.setattr(S, "_build_into", no_build)
    before = {p: p.stat().st_mtime_ns for p in bench.root.rglob("*")}
    again = S.build_synthetic(bench.root, seed=0, progress=False)
    assert again == bench
    assert {p: p.stat().st_mtime_ns for p in bench.root.rglob("*")} == before


def test_default_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(tmp_path / "x"))
    assert S.default_synthetic_dir() == tmp_path / "x"
    monkeypatch.delenv("MEDHORIZON_SYNTHETIC_DIR")
    d = S.default_synthetic_dir()
    assert d.name == f"v{L.GENERATOR_VERSION}" and d.parent.name == "synthetic"


def test_refuses_to_replace_foreign_folder(tmp_path):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "precious.txt").write_text("keep me")
    with pytest.raises(DataError, match="refusing to replace"):
        S.build_synthetic(root, progress=False)
    assert (root / "precious.txt").read_text() == "keep me"


# --------------------------------------------------------------------------- layout


def test_record_layout(records):
    assert len(records) == 16
    assert Counter(r["dataset"] for r in records) == {s: 2 for s in SOURCES}
    keys = [r["key"] for r in records]
    assert len(set(keys)) == len(keys)
    for r in records:
        slug = r["dataset"].lower().replace("-", "_")
        assert r["video_path"] == f"{slug}/{r['key']}.mp4" and r["key"].startswith(
            f"syn-{slug}-"
        )
        assert r["split"] == "test"
        assert r["duration_seconds"] == r["num_frames"] / r["fps"]
        assert r["scene_type"] in ("surgery", "examination")
        d = r["duration_seconds"]
        assert r["duration_tier"] == (
            "<10min" if d < 600 else "10-60min" if d < 3600 else ">=1h"
        )
        assert 4 <= len(r["qa"]) <= 6
        assert set(r) >= {
            "key",
            "dataset",
            "organ",
            "scene_type",
            "duration_tier",
            "video_path",
            "num_frames",
            "fps",
            "duration_seconds",
            "split",
            "qa",
        }
    assert {r["duration_tier"] for r in records} == {"<10min", "10-60min", ">=1h"}
    assert len(_long(records)) >= 3


def test_questions(records):
    qas = [q for r in records for q in r["qa"]]
    assert 70 <= len(qas) <= 90
    assert sorted(q["uid"] for q in qas) == list(range(len(qas)))
    per_task = Counter(q["task_id"] for q in qas)
    assert set(per_task) == TASKS and min(per_task.values()) >= 4
    letters = Counter(q["answer"] for q in qas)
    assert (
        set(letters) == set(LETTERS)
        and max(letters.values()) - min(letters.values()) <= 1
    )
    n_mapping = 0
    for r in records:
        tags = [q["synthetic_tag"] for q in r["qa"]]
        assert len(set(tags)) == len(tags) and all(0 <= t < 64 for t in tags)
        for q in r["qa"]:
            mark = f" [probe #{q['synthetic_tag']} first-seen]" if "synthetic_codes" in q else f" [probe #{q['synthetic_tag']}]"
            assert q["question"].endswith(mark)
            opts = q["options"]
            if isinstance(opts, dict):
                n_mapping += 1
                assert list(opts) == list(LETTERS)
                assert all(v.startswith(f"{k}. ") for k, v in opts.items())
                texts = [v[3:] for v in opts.values()]
            else:
                texts = opts
                assert not any(t[:3] in ("A. ", "B. ", "C. ", "D. ") for t in texts)
            assert len(texts) == 4 and len(set(texts)) == 4 and all(texts)
            assert q["task_class"] in (
                "Fine-grained Understanding",
                "Semantic Reasoning",
            )
            assert q["task_name"] == L.SYNTHETIC_TASKS[q["task_id"]][0]
            support = q["evidence"]["support"]
            if q["task_id"] in ("WR", "RSR", "CPR"):
                assert support == "global"
            elif q["task_id"] in ("LLS", "Site", "Hist", "Size", "LA") and r[
                "dataset"
            ] in ("REAL-Colon", "Galar"):
                assert support == "proxy"
            else:
                assert support == "local"
    assert 5 <= n_mapping < len(qas) // 2


def test_evidence_windows(records):
    for r in records:
        n, fps = r["num_frames"], r["fps"]
        windows = []
        for q in r["qa"]:
            fw = q["evidence"]["frame_windows"]
            assert 1 <= len(fw) <= 2
            for s, e in fw:
                assert 0 <= s <= e < n
                assert 3 * fps <= e - s + 1 <= 8 * fps
                windows.append((s, e))
        windows.sort()
        for (s0, e0), (s1, e1) in itertools.pairwise(windows):
            assert e0 < s1, f"overlap in {r['key']}"
        assert any(e < n / 2 for _, e in windows), r["key"]
    for r in _long(records):
        n = r["num_frames"]
        assert any(
            s >= 0.9 * n for q in r["qa"] for s, _ in q["evidence"]["frame_windows"]
        ), r["key"]
        for q in r["qa"]:
            covered = sum(e - s + 1 for s, e in q["evidence"]["frame_windows"])
            assert covered / n < 0.005, (r["key"], q["uid"], covered / n)
    # the edge cases: a window ending on the last frame, one starting at frame 0
    ends = {
        r["key"]: max(e for q in r["qa"] for _, e in q["evidence"]["frame_windows"])
        for r in records
    }
    starts = {
        r["key"]: min(s for q in r["qa"] for s, _ in q["evidence"]["frame_windows"])
        for r in records
    }
    assert any(ends[r["key"]] == r["num_frames"] - 1 for r in _long(records))
    assert 0 in starts.values()


# --------------------------------------------------------------------------- videos


def test_frame_counts_match_metadata(built, records):
    bench, _ = built
    for r in records:
        path = bench.video_path(r)
        assert V.count_frames(path) == r["num_frames"], r["key"]
        with av.open(str(path)) as c:
            assert float(c.streams.video[0].average_rate) == r["fps"]


@pytest.mark.parametrize(
    "key", ["syn-galar-01", "syn-us_study-00", "syn-real_colon-01"]
)
def test_every_evidence_frame_decodes(built, records, key):
    bench, _ = built
    rec = next(r for r in records if r["key"] == key)
    frames = _decode_all(bench.video_path(rec))
    assert len(frames) == rec["num_frames"]
    inside = np.zeros(len(frames), dtype=bool)
    for q in rec["qa"]:
        codes = [tuple(c) for c in q.get("synthetic_codes", [])] or \
            [(q["synthetic_tag"], LETTERS.index(q["answer"]))] * len(q["evidence"]["frame_windows"])
        for (s, e), want in zip(q["evidence"]["frame_windows"], codes):
            inside[s : e + 1] = True
            for i in range(s, e + 1):
                assert decode_code(frames[i]) == want, (key, q["uid"], i)
            # the frames right next to the window carry no code
            for i in (s - 1, e + 1):
                if 0 <= i < len(frames):
                    assert decode_code(frames[i]) is None, (key, i)
    outside = np.flatnonzero(~inside)
    rng = np.random.default_rng(0)
    for i in rng.choice(outside, size=min(400, len(outside)), replace=False):
        assert decode_code(frames[int(i)]) is None, (key, int(i))


def test_codes_survive_resize(built, records):
    bench, _ = built
    rec = next(r for r in records if r["key"] == "syn-grasp-01")  # 64x48, compressed
    frames = _decode_all(bench.video_path(rec))
    resamples = [Image.NEAREST, Image.BILINEAR, Image.BICUBIC, Image.LANCZOS, Image.BOX]
    sizes = [(32, 24), (448, 336), (33, 25), (50, 37), (336, 448), (224, 224)]
    checked = 0
    for q in rec["qa"]:
        want = (q["synthetic_tag"], LETTERS.index(q["answer"]))
        s, e = q["evidence"]["frame_windows"][0]
        img = Image.fromarray(frames[(s + e) // 2])
        for size in sizes:
            for rs in resamples:
                assert decode_code(img.resize(size, rs)) == want, (size, rs)
                checked += 1
        # and a background frame, resized, stays code-free
        bg = Image.fromarray(frames[s - 3 if s >= 3 else e + 3])
        for size in sizes:
            assert decode_code(bg.resize(size, Image.BICUBIC)) is None
    assert checked > 100
    for tag, letter in [(0, 0), (63, 3), (42, 1), (21, 2)]:
        img = Image.fromarray(encode_code(tag, letter, 96, 128))
        for size in sizes:
            assert decode_code(img.resize(size, Image.BICUBIC)) == (tag, letter)


@pytest.mark.parametrize("codec", ["mpeg4", "libx264"])
def test_codes_survive_each_codec(tmp_path, codec):
    # PyAV's wheels bundle both encoders; a build without one should fail here, not pass silently.
    assert codec in av.codecs_available, f"{codec} encoder missing from this PyAV/FFmpeg build"
    w, h = 64, 48
    gen = BackgroundGenerator(h, w, seed=7)
    truth = [None if (i // 9) % 2 == 0 else ((i * 11) % 64, i % 4) for i in range(120)]
    frames = [
        gen(i / 2) if t is None else encode_code(t[0], t[1], h, w)
        for i, t in enumerate(truth)
    ]
    path = tmp_path / f"{codec}.mp4"
    assert V.write_video(path, frames, 2.0, w, h, codec=codec) == len(frames)
    decoded = _decode_all(path)
    assert len(decoded) == len(frames)
    assert [decode_code(f) for f in decoded] == truth


# --------------------------------------------------------------------------- visual code


def test_encode_decode_roundtrip_all_codes():
    for tag in range(64):
        for letter in range(4):
            frame = encode_code(tag, letter, 48, 64)
            assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8
            assert decode_code(frame) == (tag, letter)
            assert decode_code(Image.fromarray(frame)) == (tag, letter)
    with pytest.raises(ValueError):
        encode_code(64, 0, 48, 64)
    with pytest.raises(ValueError):
        encode_code(0, 4, 48, 64)


def test_background_never_decodes():
    n = 0
    for seed in range(4):
        for style in ("surgical", "ultrasound"):
            for h, w in ((48, 64), (96, 128)):
                gen = BackgroundGenerator(h, w, seed=seed, style=style)
                for i in range(200):
                    frame = gen(i * 1.7)
                    assert frame.min() >= 60 and frame.max() <= 195
                    assert decode_code(frame) is None
                    n += 1
    assert n >= 3000
    frame = background_frame(12.5, 24, 32, seed=3)
    assert frame.shape == (24, 32, 3) and decode_code(frame) is None
    assert np.array_equal(
        background_frame(3.0, 48, 64, seed=1), background_frame(3.0, 48, 64, seed=1)
    )


# --------------------------------------------------------------------------- build mechanics (tiny layout)


@pytest.fixture
def tiny_layout(monkeypatch):
    layout = (("TMVP", 0, 2, (64, 48, 2.0), ("PR", "SD", "IR")),)
    monkeypatch.setattr(L, "_VIDEO_LAYOUT", layout)
    calls = []
    real = S._build_into

    def counting(tmp, seed, progress):
        calls.append(seed)
        return real(tmp, seed, progress)

    monkeypatch.setattr(S, "_build_into", counting)
    return calls


def test_concurrent_builders_build_once(tmp_path, tiny_layout):
    root = tmp_path / "shared"
    results, errors = [], []

    def run():
        try:
            results.append(S.build_synthetic(root, seed=3, progress=False))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 3
    assert tiny_layout == [3]
    assert S._is_valid(root, 3)
    assert not [
        p for p in tmp_path.iterdir() if p.name.startswith(".shared.")
    ]  # no leftovers


def test_rebuild_on_seed_change_and_force(tmp_path, tiny_layout):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    first = (root / S.SYNTHETIC_JSONL_NAME).read_bytes()
    S.build_synthetic(root, seed=0, progress=False)
    assert tiny_layout == [0]
    S.build_synthetic(root, seed=1, progress=False)  # different seed: rebuilt in place
    assert tiny_layout == [0, 1]
    assert (root / S.SYNTHETIC_JSONL_NAME).read_bytes() != first
    assert json.loads((root / "manifest.json").read_text())["seed"] == 1
    S.build_synthetic(root, seed=1, force=True, progress=False)
    assert tiny_layout == [0, 1, 1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "b.lock"]


def test_order_items(records):
    """Order items: two windows, the earlier shows the answer, the later a different (decoy) letter."""
    order = [(r, q) for r in records for q in r["qa"] if "synthetic_codes" in q]
    assert len(order) == 8 and len({r["dataset"] for r, _ in order}) >= 6
    for r, q in order:
        (w1, w2), (c1, c2) = q["evidence"]["frame_windows"], q["synthetic_codes"]
        assert w1[1] < w2[0]
        assert c1 == [q["synthetic_tag"], LETTERS.index(q["answer"])]
        assert c2[0] == q["synthetic_tag"] and c2[1] != c1[1]
        assert q["task_id"] == "RSR"


# --------------------------------------------------------------------------- only the builder's own files are replaced


def _tree(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def _rebuild_kwargs(change, monkeypatch):
    if change == "seed":
        return {"seed": 1, "progress": False}
    if change == "generator_version":
        monkeypatch.setattr(L, "GENERATOR_VERSION", L.GENERATOR_VERSION + 1)
        return {"seed": 0, "progress": False}
    return {"seed": 0, "force": True, "progress": False}


@pytest.fixture
def user_files():
    """Files a user keeps beside a build: at the top of its folder, in a folder of theirs, in a nested sample."""
    return {"notes.txt": b"my notes", "results/run1.json": b"{}", "sureon_v1/manifest.json": b'{"seed": 0}',
            "sureon_v1.lock": b""}


@pytest.mark.parametrize("change", ["seed", "generator_version", "force"])
def test_rebuild_keeps_files_beside_the_build(tmp_path, tiny_layout, monkeypatch, user_files, change):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    for rel, data in user_files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    mtimes = {rel: (root / rel).stat().st_mtime_ns for rel in user_files}
    kw = _rebuild_kwargs(change, monkeypatch)
    S.build_synthetic(root, **kw)
    assert len(tiny_layout) == 2 and S._is_valid(root, kw["seed"])
    assert {rel: (root / rel).read_bytes() for rel in user_files} == user_files
    assert {rel: (root / rel).stat().st_mtime_ns for rel in user_files} == mtimes
    files = json.loads((root / "manifest.json").read_text())["files"]
    assert sorted(k for k, v in _tree(root).items() if v is not None) == sorted([*files, *user_files])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "b.lock"]  # no temporary or old folder left


@pytest.mark.parametrize("change", ["seed", "generator_version", "force"])
def test_rebuild_refuses_when_a_file_sits_inside_the_build(tmp_path, tiny_layout, monkeypatch, change):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    (root / "videos" / "mine.mp4").write_bytes(b"my video")
    (root / "videos" / "tmvp" / "cut.mp4").write_bytes(b"my cut")
    (root / "notes.txt").write_text("beside: no obstacle")
    before = _tree(root)
    with pytest.raises(DataError, match="refusing to replace") as err:
        S.build_synthetic(root, **_rebuild_kwargs(change, monkeypatch))
    # named: exactly the two files in the way, not the build's own files nor notes.txt beside it
    assert str(err.value).split("did not write: ")[1].split(";")[0] == "videos/mine.mp4, videos/tmvp/cut.mp4"
    assert _tree(root) == before  # nothing removed or rewritten, the old build included
    assert tiny_layout == [0]  # refused before building
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "b.lock"]
    # once the files are moved out, the rebuild goes ahead
    (root / "videos" / "mine.mp4").unlink()
    (root / "videos" / "tmvp" / "cut.mp4").unlink()
    S.build_synthetic(root, seed=1, progress=False)
    assert S._is_valid(root, 1) and (root / "notes.txt").read_text() == "beside: no obstacle"


def test_real_nested_sample_survives_a_forced_rebuild(tmp_path, tiny_layout, monkeypatch):
    from medhorizon_tasks.data.synthetic import sureon as SS

    real_plan = SS.plan_sample
    monkeypatch.setattr(SS, "plan_sample", lambda seed=0: real_plan(seed)[:2])
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    SS.build_sureon_sample(root / "sureon_v1")
    sample = _tree(root / "sureon_v1")
    S.build_synthetic(root, seed=0, force=True, progress=False)
    assert tiny_layout == [0, 0]
    assert _tree(root / "sureon_v1") == sample and SS._is_valid(root / "sureon_v1", 0)


def test_valid_build_with_user_files_is_reused_untouched(tmp_path, tiny_layout):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    (root / "videos" / "mine.mp4").write_bytes(b"my video")
    (root / "notes.txt").write_text("mine")
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    S.build_synthetic(root, seed=0, progress=False)
    assert tiny_layout == [0]
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


def test_files_added_during_a_rebuild_are_kept(tmp_path, tiny_layout, monkeypatch):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    old = _tree(root)
    real = S._build_into
    late = {}

    def user_writes_meanwhile(tmp, seed, progress):
        for rel, data in late.items():
            (root / rel).write_bytes(data)
        return real(tmp, seed, progress)

    monkeypatch.setattr(S, "_build_into", user_writes_meanwhile)
    late["videos/late.mp4"] = b"written inside the build while it was rebuilt"
    with pytest.raises(DataError, match="videos/late.mp4"):
        S.build_synthetic(root, seed=1, progress=False)
    assert _tree(root) == {**old, **late}  # the old build is back in place, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "b.lock"]
    (root / "videos/late.mp4").unlink()
    late.clear()
    late["late.txt"] = b"written beside the build while it was rebuilt"
    S.build_synthetic(root, seed=1, progress=False)
    assert S._is_valid(root, 1) and (root / "late.txt").read_bytes() == late["late.txt"]


def test_symlinks_are_never_followed_or_removed(tmp_path, tiny_layout):
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.mp4").write_bytes(b"x")
    (root / "videos" / "elsewhere").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DataError, match="videos/elsewhere"):
        S.build_synthetic(root, seed=1, progress=False)
    (root / "videos" / "elsewhere").unlink()
    (root / "beside").symlink_to(outside, target_is_directory=True)
    S.build_synthetic(root, seed=1, progress=False)
    assert (root / "beside").is_symlink() and (outside / "keep.mp4").read_bytes() == b"x"


def test_symlinked_folder_is_rebuilt_in_its_target(tmp_path, tiny_layout):
    target = tmp_path / "disk" / "bench"
    S.build_synthetic(target, seed=0, progress=False)
    (target / "notes.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    S.build_synthetic(link, seed=1, progress=False)
    assert link.is_symlink() and S._is_valid(target, 1) and (target / "notes.txt").read_text() == "mine"


def test_build_without_files_list_is_still_replaced(tmp_path, tiny_layout):
    # manifests written before the "files" list: the builder's files follow from "videos"
    root = tmp_path / "b"
    S.build_synthetic(root, seed=0, progress=False)
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["files"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "notes.txt").write_text("mine")
    S.build_synthetic(root, seed=1, progress=False)
    assert S._is_valid(root, 1) and tiny_layout == [0, 1] and (root / "notes.txt").read_text() == "mine"


def test_the_benchmark_builds_beside_samples_built_first(tmp_path):
    """The Sureon and SurgHiBench samples live inside the benchmark's folder by default; a user who runs
    a sample task first must still be able to build the benchmark there (it used to refuse)."""
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample
    from medhorizon_tasks.data.synthetic.surghi import build_surghi_sample

    root = tmp_path / "v2"
    sureon = build_sureon_sample(root / "sureon_v1")
    surghi = build_surghi_sample(root / "surghi_v2")
    bench = S.build_synthetic(root, seed=0, progress=False)
    assert bench.data_path.exists() and len(bench.records()) == 16
    assert sureon.data_path.exists() and surghi.annotations_path.exists(), "the samples were kept"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="notes.txt"):
        S.build_synthetic(foreign, seed=0, progress=False)
