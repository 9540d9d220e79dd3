"""The Sureon and SurgHiBench synthetic samples' folders: cached, rebuilt on a new seed, and never a file
removed that the builder did not write (the MedHorizon benchmark's folder: tests/test_synthetic.py)."""

import json
from dataclasses import dataclass

import pytest

from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.data.synthetic import sureon as SS
from medhorizon_tasks.data.synthetic import surghi as SG


@dataclass
class Kind:
    module: object
    build: object
    what: str
    inside: str  # a path inside the sample's own entries
    legacy: object  # manifest -> the manifest an older version wrote (no "files" list)


KINDS = {
    "sureon": Kind(SS, SS.build_sureon_sample, "synthetic Sureon sample", "videos/clips/extra.mp4",
                   lambda m: {"version": m["version"], "seed": m["seed"], "items": m["items"]}),
    "surghi": Kind(SG, SG.build_surghi_sample, "synthetic SurgHiBench sample", "videos/synthtree/mine.mp4",
                   lambda m: {k: m[k] for k in ("version", "seed", "fps", "frames", "videos")}),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request, monkeypatch):
    """Each sample with two videos instead of all: these tests are about the folder, not the videos."""
    k = KINDS[request.param]
    real = k.module.plan_sample
    monkeypatch.setattr(k.module, "plan_sample", lambda seed=0: real(seed)[:2])
    return k


def _tree(root):
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def test_sample_is_cached_and_rebuilt_on_seed_change(tmp_path, kind):
    root = tmp_path / "s"
    sample = kind.build(root, seed=0)
    first = _tree(root)
    mtimes = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    assert kind.build(root, seed=0) == sample
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == mtimes
    kind.build(root, seed=1)
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["seed"] == 1 and _tree(root) != first
    assert {k for k, v in _tree(root).items() if v is not None} == set(manifest["files"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s", "s.lock"]


def test_sample_rebuild_keeps_files_it_did_not_write(tmp_path, kind):
    root = tmp_path / "s"
    kind.build(root, seed=0)
    (root / "notes.txt").write_text("beside the sample")
    (root / kind.inside).write_bytes(b"inside the sample")
    before = _tree(root)
    with pytest.raises(DataError, match="refusing to replace") as err:
        kind.build(root, seed=1)
    assert str(err.value).split("did not write: ")[1].split(";")[0] == kind.inside
    assert _tree(root) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s", "s.lock"]
    (root / kind.inside).unlink()
    kind.build(root, seed=1)
    assert json.loads((root / "manifest.json").read_text())["seed"] == 1
    assert (root / "notes.txt").read_text() == "beside the sample"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s", "s.lock"]


def test_sample_refuses_a_folder_that_is_not_a_sample(tmp_path, kind):
    root = tmp_path / "s"
    root.mkdir()
    (root / "manifest.json").write_text('{"seed": 1}')
    (root / "data.csv").write_text("a,b")
    with pytest.raises(DataError, match=f"not a {kind.what}.*data.csv, manifest.json.*refusing to replace"):
        kind.build(root, seed=0)
    assert sorted(_tree(root)) == ["data.csv", "manifest.json"]


def test_sample_written_before_the_files_list_is_replaced(tmp_path, kind):
    root = tmp_path / "s"
    kind.build(root, seed=0)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps(kind.legacy(manifest)))
    kind.build(root, seed=0)  # still valid: reused
    assert "files" not in json.loads((root / "manifest.json").read_text())
    kind.build(root, seed=1)
    assert json.loads((root / "manifest.json").read_text())["seed"] == 1
