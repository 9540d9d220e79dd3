"""Shared fixtures: the embedded synthetic benchmark is built once per test session."""

import json
import os
import shutil
import tempfile
import time

import av
import pytest

from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, plan_for
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.core.video.decode import index_video
from medhorizon_tasks.data.synthetic import medhorizon as S

# The tests' file identities are remembered in a database of their own (subprocesses inherit it), never the
# user's ~/.cache one.
os.environ.setdefault("MEDHORIZON_IDENTITY_DB", os.path.join(tempfile.mkdtemp(prefix="mh-ids-"), "ids.sqlite3"))
# Likewise the videos' packet indices (core.video.index_store).
os.environ.setdefault("MEDHORIZON_INDEX_CACHE", tempfile.mkdtemp(prefix="mh-index-"))
# And the answers read by `score` (core.extract.stored), which `compare` reuses.
os.environ.setdefault("MEDHORIZON_EXTRACTION_CACHE", tempfile.mkdtemp(prefix="mh-extractions-"))


@pytest.fixture(scope="session")
def synthetic_build(tmp_path_factory):
    """(SyntheticBenchmark, build seconds), in a private folder that subprocesses also use."""
    root = tmp_path_factory.mktemp("synthetic") / "bench"
    t0 = time.perf_counter()
    bench = S.build_synthetic(root, seed=0, progress=False)
    seconds = time.perf_counter() - t0
    os.environ["MEDHORIZON_SYNTHETIC_DIR"] = str(root)
    return bench, seconds


@pytest.fixture(scope="session")
def surghi_sample(tmp_path_factory):
    """The synthetic SurgHiBench sample, built once in a private folder (subprocesses are given its paths)."""
    from medhorizon_tasks.data.synthetic.surghi import SAMPLE_VERSION, build_surghi_sample

    # where `--data surghi_synthetic` finds it when MEDHORIZON_SYNTHETIC_DIR is its parent
    return build_surghi_sample(tmp_path_factory.mktemp("surghi_sample") / f"surghi_v{SAMPLE_VERSION}")


@pytest.fixture(scope="session")
def synthetic(synthetic_build):
    return synthetic_build[0]


def _keyframe_packets(path):
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return [(p.pts, p.pos, p.size) for p in c.demux(s) if p.size and p.is_keyframe]


# The tasks of the broken release's tests and their frame settings.
BROKEN_SETTINGS = {"medhorizon": FrameSetting(), "medhorizon_frames4": FrameSetting(frames=4),
                   "medhorizon_oracle": FrameSetting(mode="oracle")}


@pytest.fixture(scope="session")
def broken_release(synthetic, tmp_path_factory):
    """A small release of synthetic videos: one good, one missing, one whose keyframe packet in the middle is
    zeroed (its packet index is fine; decoding fails only in that GOP, which only the cap-64 plan needs).
    (data path, video root, {"good"|"missing"|"corrupt": set of uids})."""
    tmp = tmp_path_factory.mktemp("broken_release")
    records = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    short = sorted((r for r in records if r["duration_seconds"] < 600), key=lambda r: -len(r["qa"]))
    root = tmp / "videos"
    corrupt, corrupt_at = None, None
    for rec in short:
        index = index_video(synthetic.video_root / rec["video_path"])
        needed = {name: set() for name in BROKEN_SETTINGS}
        for it in load_release_records(tmp, [rec]):
            for name, setting in BROKEN_SETTINGS.items():
                needed[name].update(plan_for(it, setting, index).indices)
        # a GOP that the cap-64 plan needs and neither 4 frames nor any oracle plan touches
        keys = [int(k) for k in index.key_positions] + [index.num_frames]
        for k0, k1 in zip(keys, keys[1:]):
            gop = set(range(k0, k1))
            if gop & needed["medhorizon"] and not gop & (needed["medhorizon_frames4"] | needed["medhorizon_oracle"]):
                corrupt, corrupt_at = rec, int(index.pts[k0])
                break
        if corrupt is not None:
            break
    assert corrupt is not None, "no video with a GOP that only the cap-64 plan needs"
    missing, good = [r for r in short if r is not corrupt][:2]
    chosen = [corrupt, missing, good]
    for rec in chosen:
        dst = root / rec["video_path"]
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(synthetic.video_root / rec["video_path"], dst)
    (root / missing["video_path"]).unlink()
    path = root / corrupt["video_path"]
    pts, pos, size = next(p for p in _keyframe_packets(path) if p[0] == corrupt_at)
    data = bytearray(path.read_bytes())
    data[pos:pos + size] = bytes(size)
    path.write_bytes(bytes(data))
    assert index_video(path).num_frames == index_video(synthetic.video_root / corrupt["video_path"]).num_frames
    data_path = tmp / "release.jsonl"
    data_path.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    uids = {name: {str(q["uid"]) for q in rec["qa"]} for name, rec in
            (("corrupt", corrupt), ("missing", missing), ("good", good))}
    return data_path, root, uids


def load_release_records(tmp, records):
    p = tmp / "one.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return load_release(p)


@pytest.fixture(scope="session")
def twins(synthetic, tmp_path_factory):
    """A video and its repaired twin (same size, same first and last MiB, another middle): tests/replaced_video.py."""
    from replaced_video import make_twins

    return make_twins(synthetic, tmp_path_factory.mktemp("twins"))
