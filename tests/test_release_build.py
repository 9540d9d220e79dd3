"""The dataset card and the Hub build: the card's schema is the code's, a build loads back offline as the same
items with the same version hash, and publishing is a dry run unless a token is there."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from datasets import Features, load_dataset

from medhorizon_tasks.benchmarks.data import data_version
from medhorizon_tasks.benchmarks.medhorizon.release import Item, features, load_release
from medhorizon_tasks.benchmarks.sureon.items import features as sureon_features
from medhorizon_tasks.benchmarks.sureon.items import from_row as sureon_from_row
from medhorizon_tasks.benchmarks.sureon.items import load_items, parse_item
from medhorizon_tasks.benchmarks.surghi.frames import item_features, read_frame_rows
from medhorizon_tasks.commands.main import main as run
from medhorizon_tasks.core.errors import DataError, MedHorizonError
from medhorizon_tasks.data import release_build as rb
from medhorizon_tasks.data.sources import SOURCES
from upstream_fakes import record, write_release

CARD = Path(__file__).resolve().parents[1] / "hf_dataset_card" / "README.md"


# ------------------------------------------------------------------ the card

def test_the_cards_schema_is_the_codes_features():
    header, _ = rb.split_card(CARD.read_text(encoding="utf-8"))
    declared = {c["config_name"]: Features._from_yaml_list(c["features"]) for c in header["dataset_info"]}
    assert declared == {"medhorizon": features(), "sureon": sureon_features(), "surghi": item_features()}
    configs = {c["config_name"]: c for c in header["configs"]}
    assert {n: c["data_files"] for n, c in configs.items()} == {
        n: [{"split": "test", "path": p}] for n, p in rb.CONFIG_PATHS.items()}
    assert [n for n, c in configs.items() if c.get("default")] == ["medhorizon"]
    assert header["license"] == "cc-by-nc-4.0" and "video-text-to-text" in header["task_categories"]


def test_the_card_documents_every_field_and_every_source():
    _, body = rb.split_card(CARD.read_text(encoding="utf-8"))
    for feats in (features(), sureon_features(), item_features()):
        for name in feats:
            assert f"`{name}`" in body, name
    for s in SOURCES:
        assert f"**{s.name}**" in body and s.licence in body, s.name
    for phrase in ("Intended use", "Out of scope", "Limitations", "Citation", "clinical decision making",
                   "--dry-run", "leaderboard version"):
        assert phrase.lower() in body.lower(), phrase


# ------------------------------------------------------------------ sources of a build

def _medhorizon(tmp: Path) -> Path:
    a = record("v1", "REAL-Colon", "real_colon/002-010.mp4", 200, 5.0, [1, 2])
    a["qa"][0]["evidence"] = {"support": "local", "frame_windows": [[10, 20], [40, 45]]}
    a["qa"][1]["options"] = {"A": "A. one", "B": "B. two", "C": "C. three", "D": "D. four"}
    a["qa"][1]["answer"] = "two"
    b = record("v2", "MultiBypass", "multibypass/BBP01.mp4", 3000, 25.0, [3])
    b["qa"][0]["task_id"] = "WR"
    b["qa"][0]["evidence"] = {"support": "global"}
    return write_release(tmp / "release.jsonl", [a, b])


def _sureon(tmp: Path) -> Path:
    recs = [
        {"uid": "m1", "category": "AD", "question": "What is done?", "video_path": "clips/m1.mp4", "start_s": 1.0,
         "end_s": 9.0, "options": [f"option {k}" for k in range(7)], "answer": "C"},
        {"uid": "t1", "category": "TO", "question": "Order these.", "video_path": "clips/t1.mp4", "start_s": 0,
         "end_s": 60, "events": ["Cut", "Clip", "Suture"], "answer": ["Clip", "Cut", "Suture"]},
        {"uid": "s1", "category": "SM", "question": "Summarise.", "video_path": "clips/s1.mp4", "start_s": 5,
         "end_s": 90, "reference": "Expose, clip, divide."},
    ]
    path = tmp / "sureon.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _surghi(tmp: Path) -> Path:
    rows = [("BernBypass70", "BBP01", t, "preparation" if t < 3 else "gastric_pouch_creation",
             "trocar_placement" if t < 3 else "horizontal_stapling") for t in range(6)]
    rows += [("MyDataset", "vid7", t, "Approach" if t < 2 else "Closure", "Cut" if t % 2 else "Suture")
             for t in range(4)]
    path = tmp / "surghi.jsonl"
    path.write_text("".join(json.dumps({"dataset": d, "video": v, "frame": f, "phase": p, "step": s,
                                        "timestamp_s": float(f), "video_path": f"{d.lower()}/{v}.mp4"}) + "\n"
                            for d, v, f, p, s in rows))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("build")
    src = {"medhorizon": _medhorizon(tmp), "sureon": _sureon(tmp), "surghi": _surghi(tmp)}
    res = rb.build_dataset(src, tmp / "out")
    return src, res, tmp


def _load(out: Path, config: str, cache: Path):
    return load_dataset(str(out), config, split="test", cache_dir=str(cache))


# ------------------------------------------------------------------ the build

def test_load_dataset_on_the_built_folder_gives_the_source_items(built, tmp_path, monkeypatch):
    import datasets
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True, raising=False)
    src, res, _ = built
    ds = load_dataset(str(res.out), split="test", cache_dir=str(tmp_path / "c"))  # the default config
    assert ds.features == features()
    assert [Item.from_record(r) for r in ds] == load_release(src["medhorizon"])

    ds = _load(res.out, "sureon", tmp_path / "c")
    assert ds.features == sureon_features()
    problems: list[str] = []
    again = [parse_item(sureon_from_row(r), n, problems) for n, r in enumerate(ds, 1)]
    assert not problems and again == load_items(src["sureon"])

    ds = _load(res.out, "surghi", tmp_path / "c")
    assert ds.features == item_features()
    want = read_frame_rows(src["surghi"], role="items")
    assert [(r["uid"], r["dataset"], r["video"], r["frame"], r["phase"], r["step"], r["timestamp_s"],
             r["video_path"]) for r in ds] == [(w.uid, w.dataset, w.video, w.frame, w.phase, w.step, w.timestamp_s,
                                                w.video_path) for w in want]


def test_the_version_hash_is_what_leaderboard_version_prints_for_source_and_build(built):
    src, res, _ = built
    out = res.out
    stored = json.loads((out / rb.VERSION_FILE).read_text())
    assert stored["versions"] == res.versions
    assert res.versions["medhorizon"] == data_version("medhorizon", src["medhorizon"]) == data_version("medhorizon", out)
    assert res.versions["sureon"] == data_version("sureon", src["sureon"]) == \
        data_version("sureon", out / rb.BENCHMARK_FILES["sureon"])
    # The unknown dataset's derived hierarchy travels with the rows: the hash is reproducible from the build.
    assert res.versions["surghi"] == data_version("surghi", src["surghi"]) == \
        data_version("surghi", out / rb.BENCHMARK_FILES["surghi"], hierarchy=out / "surghi" / "hierarchies.json")
    assert load_release(out) == load_release(src["medhorizon"])  # the package reads the build as --data


def test_the_built_card_lists_exactly_the_built_configs_with_their_counts(built):
    _, res, _ = built
    header, body = rb.split_card((res.out / "README.md").read_text())
    assert [c["config_name"] for c in header["configs"]] == ["medhorizon", "sureon", "surghi"]
    counts = {c["config_name"]: c["splits"][0]["num_examples"] for c in header["dataset_info"]}
    assert counts == {"medhorizon": 3, "sureon": 3, "surghi": 10}
    assert res.versions["medhorizon"] in body and "<!-- build-info -->" not in body
    assert "## Getting the videos" in body


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_rebuild_gives_the_same_bytes_and_drops_configs_left_out(built):
    src, res, tmp = built
    before = _digests(res.out)
    rb.build_dataset(src, res.out)
    assert _digests(res.out) == before
    rb.build_dataset({"medhorizon": src["medhorizon"]}, res.out)
    left = _digests(res.out)
    assert not any(p.startswith(("sureon", "surghi", "data/sureon", "data/surghi")) for p in left)
    header, _ = rb.split_card((res.out / "README.md").read_text())
    assert [c["config_name"] for c in header["configs"]] == ["medhorizon"]
    rb.build_dataset(src, res.out)  # restore for the other tests of this module
    assert _digests(res.out) == before


def test_invalid_annotations_are_all_named_and_nothing_is_written(tmp_path):
    bad = record("v1", "REAL-Colon", "../outside/002-010.mp4", 200, 5.0, [1, 2])
    bad["qa"][1]["answer"] = "Z"
    src = write_release(tmp_path / "bad.jsonl", [bad])
    with pytest.raises(DataError) as exc:
        rb.build_dataset({"medhorizon": src}, tmp_path / "out")
    assert "item 2: field 'answer'" in str(exc.value)
    assert not (tmp_path / "out").exists()
    bad["qa"][1]["answer"] = "B"
    write_release(src, [bad])
    with pytest.raises(DataError, match="item 1: field 'video_path'.*relative"):
        rb.build_dataset({"medhorizon": src}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_folder_with_other_files_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(MedHorizonError, match="notes.txt"):
        rb.build_dataset({"medhorizon": _medhorizon(tmp_path)}, out)


# ------------------------------------------------------------------ publishing

class _NoNetwork:
    def __init__(self, *a, **k):
        raise AssertionError("a dry run must not create an HfApi client")


def test_dry_run_prints_every_path_size_and_hash_and_sends_nothing(built, capsys, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", _NoNetwork)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    src, res, tmp = built
    assert run(["build-dataset", "--data", str(src["medhorizon"]), "--data", f"sureon={src['sureon']}", "--data",
                f"surghi={src['surghi']}", "--out", str(res.out), "--push", "me/medhorizon", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run (--dry-run)" in out and "me/medhorizon" in out
    for f in rb.upload_plan(res.out):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(f["path"] + " "))
        assert f"{f['size']:,} B" in line and f"sha256:{f['sha256']}" in line
    assert "README.md" in out and rb.VERSION_FILE in out and rb.CONFIG_PATHS["surghi"] in out
    # a built folder alone, no --push: the same plan (it said "nothing to do")
    assert run(["build-dataset", "--out", str(res.out), "--dry-run"]) == 0
    alone = capsys.readouterr().out
    assert all(f"sha256:{f['sha256']}" in alone for f in rb.upload_plan(res.out))


def test_pushing_without_a_token_is_a_dry_run(built, capsys, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", _NoNetwork)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    _, res, _ = built
    assert run(["build-dataset", "--out", str(res.out), "--push", "me/medhorizon", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dry_run"] and "no Hugging Face token" in result["reason"] and result["commit"] is None
    assert [f["path"] for f in result["files"]] == [f["path"] for f in rb.upload_plan(res.out)]


def test_pushing_with_a_token_uploads_the_folder_in_one_commit(built):
    _, res, _ = built
    calls = []

    class FakeApi:
        def create_repo(self, **kw):
            calls.append(("create_repo", kw))

        def upload_folder(self, **kw):
            calls.append(("upload_folder", kw))

            class Info:
                commit_url = "https://huggingface.co/datasets/me/x/commit/abc"
            return Info()

    result = rb.push(res.out, "me/x", api=FakeApi())
    assert not result["dry_run"] and result["commit"].endswith("/commit/abc")
    (_, create), (_, upload) = calls
    assert create == {"repo_id": "me/x", "repo_type": "dataset", "private": False, "exist_ok": True}
    assert upload["folder_path"] == str(res.out) and upload["repo_type"] == "dataset"
    assert sorted(upload["allow_patterns"]) == sorted(f["path"] for f in rb.upload_plan(res.out))
    assert res.versions["medhorizon"] in upload["commit_message"]


# ------------------------------------------------------------------ hostile or careless releases (issue 21, kind 3)

def test_two_videos_sharing_one_key_are_refused_naming_both(tmp_path, capsys):
    a = record("v1", "REAL-Colon", "real_colon/002-010.mp4", 200, 5.0, [1, 2])
    b = record("v1", "MultiBypass", "multibypass/BBP01.mp4", 3000, 25.0, [3])
    src = write_release(tmp_path / "dup.jsonl", [a, b])
    assert run(["build-dataset", "--data", str(src), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "line 2: video 'v1' field 'key': line 1 already gives this key to another video" in err
    assert "'multibypass/BBP01.mp4' vs 'real_colon/002-010.mp4'" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    # the same from a folder that holds such a JSONL (a build made by hand, or by an older version)
    folder = tmp_path / "folder"
    folder.mkdir()
    write_release(folder / "mlvbench_test.jsonl", [a, b])
    assert run(["build-dataset", "--data", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert "already gives this key to another video" in capsys.readouterr().err
    assert run(["leaderboard", "version", "--benchmark", "medhorizon", "--data", str(src)]) == 2
    capsys.readouterr()
    # one video in two records (same key, same video) is one video: accepted
    b = record("v1", "REAL-Colon", "real_colon/002-010.mp4", 200, 5.0, [3])
    assert run(["build-dataset", "--data", str(write_release(src, [a, b])), "--out", str(tmp_path / "out")]) == 0


def test_republishing_a_built_folder_keeps_its_records_and_its_version(built, tmp_path, capsys):
    src, res, _ = built
    again = tmp_path / "again"
    assert run(["build-dataset", "--data", str(res.out), "--out", str(again)]) == 0
    assert (again / rb.BENCHMARK_FILES["medhorizon"]).read_bytes() == (res.out / rb.BENCHMARK_FILES["medhorizon"]) \
        .read_bytes()
    capsys.readouterr()
    assert run(["leaderboard", "version", "--benchmark", "medhorizon", "--data", str(again)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == json.loads((again / rb.VERSION_FILE).read_text())["versions"]["medhorizon"] == \
        res.versions["medhorizon"]


def test_an_out_folder_whose_data_is_a_symlink_elsewhere_is_refused(tmp_path, capsys):
    src = _medhorizon(tmp_path)
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    out.mkdir()
    (out / "data").symlink_to(elsewhere, target_is_directory=True)
    assert run(["build-dataset", "--data", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "data -> " in err and "outside" in err
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in out.iterdir()) == ["data"]


def test_the_upload_plan_refuses_a_folder_missing_what_the_card_names(tmp_path, capsys, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", _NoNetwork)
    out = tmp_path / "out"
    rb.build_dataset({"medhorizon": _medhorizon(tmp_path)}, out)
    parquet = out / rb.CONFIG_PATHS["medhorizon"]
    moved = parquet.rename(tmp_path / "elsewhere.parquet")
    parquet.symlink_to(moved)  # the card's file, now outside the folder
    assert run(["build-dataset", "--out", str(out), "--push", "me/x", "--dry-run"]) == 2
    assert "symlinks" in capsys.readouterr().err
    parquet.unlink()
    assert run(["build-dataset", "--out", str(out), "--push", "me/x", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert rb.CONFIG_PATHS["medhorizon"] in err and "does not hold" in err
    with pytest.raises(MedHorizonError, match="does not hold"):
        rb.upload_plan(out)
