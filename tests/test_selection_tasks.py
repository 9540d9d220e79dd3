"""The task variants that show a query-aware selection (medhorizon_aks128 ...): reading the selection file, its
checks and clear errors, and the rows of the protocol registry."""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon.diagnostics import SELECTION_VARIANTS, expected_yaml_files
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, plan_for
from medhorizon_tasks.benchmarks.medhorizon.release import Item
from medhorizon_tasks.benchmarks.medhorizon.selection import SELECTION_ENV
from medhorizon_tasks.benchmarks.medhorizon.taxonomy import task_type
from medhorizon_tasks.core.errors import DataError, MedHorizonError, VideoError


def _item(uid="u1", video_key="v1") -> Item:
    t = task_type("PR")
    return Item(uid=uid, video_key=video_key, source="AutoLaparo", organ="", scene_type="", video_path="v.mp4",
                num_frames=3000, fps=25.0, duration_s=120.0, question="q?", options=("a", "b", "c", "d"),
                answer="A", task="PR", task_name=t.name, family=t.family, hop=0, evidence_support="local",
                evidence_windows=((100, 120),))


def _write(folder, rows, name="selection-aks-128.jsonl"):
    """Rows as `select` writes them: the selector and budget of the file's name unless a row says otherwise."""
    folder.mkdir(exist_ok=True)
    sel, _, budget = name[len("selection-"):-len(".jsonl")].rpartition("-")
    rows = [{"selector": sel, "budget": int(budget), **r} for r in rows]
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


SETTING = FrameSetting.from_kwargs({"mode": "visual", "frames": 128, "strategy": "selected", "selector": "aks"})


def test_the_task_plan_is_the_selection_in_time_order(tmp_path, monkeypatch):
    _write(tmp_path / "sel", [{"uid": "u1", "video_key": "v1", "scorer": "s", "selector_version": "1",
                               "indices": [0, 110, 2999]}])
    monkeypatch.setenv(SELECTION_ENV, str(tmp_path / "sel"))
    plan = plan_for(_item(), SETTING)
    assert plan.indices == (0, 110, 2999) and plan.timestamps == (0.0, 4.4, 119.96)
    assert plan.policy == "selected(aks,budget=128,scorer=s,v1)"
    assert SETTING.describe() == "128 frames, aks-selected"
    assert SETTING.key()["selector"] == "aks" and "selector" not in FrameSetting(frames=16).key()


def test_missing_selection_and_mismatched_rows_are_clear_errors(tmp_path, monkeypatch):
    monkeypatch.delenv(SELECTION_ENV, raising=False)
    with pytest.raises(MedHorizonError, match="MEDHORIZON_SELECTION is not set.*select --selector aks --budget 128"):
        plan_for(_item(), SETTING)
    monkeypatch.setenv(SELECTION_ENV, str(tmp_path / "none"))
    with pytest.raises(MedHorizonError, match="selection-aks-128.jsonl does not exist"):
        plan_for(_item(), SETTING)
    _write(tmp_path / "sel", [{"uid": "u1", "video_key": "other", "indices": [1]},
                              {"uid": "u2", "video_key": "v1", "error": "no such file"}])
    monkeypatch.setenv(SELECTION_ENV, str(tmp_path / "sel"))
    with pytest.raises(DataError, match="item u1: field video_key"):
        plan_for(_item(), SETTING)
    with pytest.raises(VideoError, match="item u2: the selection pre-pass could not read"):
        plan_for(_item("u2"), SETTING)
    with pytest.raises(DataError, match="item u3 has no selection"):
        plan_for(_item("u3"), SETTING)
    _write(tmp_path / "bad", [{"uid": "u1", "indices": []}])
    monkeypatch.setenv(SELECTION_ENV, str(tmp_path / "bad"))
    with pytest.raises(DataError, match="item u1 \\(line 1\\): field indices"):
        plan_for(_item(), SETTING)


def test_a_selected_setting_needs_a_selector_and_a_budget():
    with pytest.raises(ValueError, match="go together"):
        FrameSetting(frames=128, strategy="selected")
    with pytest.raises(ValueError, match="needs a frame budget"):
        FrameSetting(strategy="selected", selector="aks")


def test_the_three_variants_and_their_synthetic_twins_are_generated():
    names = {v.task(s) for v in SELECTION_VARIANTS for s in (False, True)}
    assert names == {"medhorizon_aks128", "medhorizon_wfs128", "medhorizon_vilamp_select128",
                     "medhorizon_synthetic_aks128", "medhorizon_synthetic_wfs128",
                     "medhorizon_synthetic_vilamp_select128"}
    files = expected_yaml_files()
    assert "selector: wfs_sb" in files["medhorizon_wfs128.yaml"] and "strategy: selected" in files[
        "medhorizon_synthetic_vilamp_select128.yaml"]


def test_protocol_prints_the_selector_rows_recipe_and_lists_them_runnable(capsys):
    import shlex

    from medhorizon_tasks.commands.main import main

    assert main(["protocol", "wfs_sb", "--output-path", "runs/wfs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    commands = [x for x in lines if not x.startswith("#")]
    # WFS-SB's released scorer: BLIP-2's image-text matching head (its preprocess/extract.py default)
    assert shlex.split(commands[0]) == ["medhorizon-tasks", "select", "--selector", "wfs_sb", "--scorer",
                                        "hf-itm:Salesforce/blip2-itm-vit-g", "--budget", "128", "--recall", "--out",
                                        "selections/"]
    assert commands[1].startswith("MEDHORIZON_SELECTION=selections/ medhorizon-tasks run --model MODEL")
    assert "--tasks medhorizon_wfs128" in commands[1] and commands[1].endswith("--output_path runs/wfs")
    assert main(["protocol", "vilamp"]) == 0
    assert "ViLAMP's own model (its feature merging) needs its repository" in capsys.readouterr().out
    assert main(["protocol", "--list"]) == 0
    listed = {x.split()[0]: x for x in capsys.readouterr().out.splitlines()}
    for row, task in (("aks", "medhorizon_aks128"), ("wfs_sb", "medhorizon_wfs128"),
                      ("vilamp", "medhorizon_vilamp_select128")):
        assert "runnable as its selection" in listed[row] and task in listed[row]
        assert "not runnable" not in listed[row]


def test_stats_recall_shows_uniform_budgets_and_a_selection_beside_them(synthetic, tmp_path, capsys):
    from medhorizon_tasks.benchmarks.medhorizon.evidence_recall import evidence_recall, uniform_timestamps
    from medhorizon_tasks.benchmarks.medhorizon.protocol import evidence_seconds
    from medhorizon_tasks.benchmarks.medhorizon.release import load_release
    from medhorizon_tasks.commands.main import main
    from medhorizon_tasks.core.sampling import Uniform

    items = load_release(synthetic.data_path)
    # a hand-made "selection": each item's first evidence window start, i.e. every localizable item hit
    _write(tmp_path / "sel", [{"uid": it.uid, "video_key": it.video_key, "indices": [1],
                               "timestamps": [evidence_seconds(it)[0][0]] if it.evidence_windows else [0.0]}
                              for it in items], name="selection-mine-16.jsonl")
    assert main(["stats", "--data", str(synthetic.data_path), "--recall", "--selection", str(tmp_path / "sel"),
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)["evidence_recall"]
    u16 = evidence_recall(items, uniform_timestamps(items, Uniform(16)))["item_recall"]
    assert [r["budget"] for r in rep["uniform"]] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert rep["uniform"][2]["item_recall"] == pytest.approx(u16) and u16 < 0.6
    assert rep["mine (selected)"] == [{"budget": 16, "item_recall": 1.0, "window_recall": rep["mine (selected)"][0][
        "window_recall"], "n_scored": rep["uniform"][0]["n_scored"], "n_missing": 0}]
    assert main(["stats", "--data", str(synthetic.data_path), "--recall"]) == 0
    text = capsys.readouterr().out
    assert "| frames | uniform item recall |" in text and f"| 16 | {100 * u16:.1f}% |" in text


def test_every_selector_parameter_is_in_the_select_runs_identity():
    from pathlib import Path

    from medhorizon_tasks.core.selectors import Aks, Wfs
    from medhorizon_tasks.runs.select import SelectJob

    def ident(*selectors):
        return SelectJob([], Path("."), Path("out"), None, "scorer", list(selectors)).identity()[0]

    assert ident(Wfs(16)) == ident(Wfs(16))
    assert ident(Wfs(16)) != ident(Wfs(16, w_max=0.5)), "a weight describe() does not show still counts"
    assert ident(Aks(16)) != ident(Aks(16, t1=0.7)) != ident(Aks(32))


def test_a_selection_file_is_what_its_rows_say_not_what_its_name_says(tmp_path, monkeypatch):
    """A uniform selection, or a 16-frame AKS one, copied under selection-aks-128.jsonl was run and reported as
    "128 frames, aks-selected"; the rows' own selector and budget now decide, naming the file, field and values."""
    monkeypatch.setenv(SELECTION_ENV, str(tmp_path / "sel"))
    row = {"uid": "u1", "video_key": "v1", "indices": [0, 110, 2999]}
    _write(tmp_path / "sel", [{**row, "selector": "uniform"}])
    with pytest.raises(DataError) as err:
        plan_for(_item(), SETTING)
    text = str(err.value)
    assert "selection-aks-128.jsonl" in text and "field selector is 'uniform'" in text and "'aks'" in text, text
    _write(tmp_path / "sel", [{**row, "budget": 16}])
    with pytest.raises(DataError, match=r"selection-aks-128\.jsonl: item u1 \(line 1\): field budget is 16, the "
                                        r"file's name says 128"):
        plan_for(_item(), SETTING)
    _write(tmp_path / "sel", [{**row, "budget": 2}], name="selection-aks-2.jsonl")
    two = FrameSetting.from_kwargs({"mode": "visual", "frames": 2, "strategy": "selected", "selector": "aks"})
    with pytest.raises(DataError, match="field indices has 3 frames, more than its budget 2"):
        plan_for(_item(), two)
    _write(tmp_path / "sel", [row])
    assert plan_for(_item(), SETTING).indices == (0, 110, 2999)  # the rows say aks, 128: shown


def _selection_for(items):
    return [{"uid": it.uid, "video_key": it.video_key, "indices": [0], "timestamps": [0.0]} for it in items]


def test_stats_refuses_a_selection_made_for_other_data_or_only_some_items(synthetic, tmp_path, capsys):
    """An AKS selection of 6 items was scored against all 88 (every other item a miss: 10.5% printed, exit 0);
    stats now refuses it as a model run does."""
    from medhorizon_tasks.benchmarks.medhorizon.release import load_release
    from medhorizon_tasks.commands.main import main

    items = load_release(synthetic.data_path)
    _write(tmp_path / "part", _selection_for(items[:6]), name="selection-aks-16.jsonl")
    assert main(["stats", "--data", str(synthetic.data_path), "--recall", "--selection", str(tmp_path / "part")]) == 2
    err = capsys.readouterr().err
    assert f"no selection for {len(items) - 6} of the {len(items)} items" in err and "selection-aks-16.jsonl" in err
    assert "made for other data or for only some of the items" in err
    other = _selection_for(items)
    other[3]["video_key"] = "another_video"
    _write(tmp_path / "other", other, name="selection-aks-16.jsonl")
    assert main(["stats", "--data", str(synthetic.data_path), "--recall", "--selection", str(tmp_path / "other")]) == 2
    assert "field video_key" in capsys.readouterr().err
    copied = [{**r, "selector": "uniform"} for r in _selection_for(items)]
    _write(tmp_path / "copied", copied, name="selection-aks-16.jsonl")
    assert main(["stats", "--data", str(synthetic.data_path), "--recall", "--selection", str(tmp_path / "copied")]) == 2
    assert "field selector is 'uniform'" in capsys.readouterr().err
    from medhorizon_tasks.benchmarks.medhorizon.sparsity import is_localizable

    errors = _selection_for(items)
    k = next(i for i, it in enumerate(items) if is_localizable(it))
    errors[k] = {"uid": items[k].uid, "video_key": items[k].video_key, "error": "unreadable"}
    _write(tmp_path / "errors", errors, name="selection-aks-16.jsonl")
    assert main(["stats", "--data", str(synthetic.data_path), "--recall", "--selection", str(tmp_path / "errors")]) == 0
    assert "aks (selected), 16 frames: 1 localizable item(s) have no frames" in capsys.readouterr().out
