"""The VLMEvalKit adapter's parts that need no VLMEvalKit process: presets, frame store, outcome log,
stale-prediction guard, launcher refusals, and that it and the lmms-eval hooks call the same benchmark functions."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from medhorizon_tasks.adapters.lmms_eval import medhorizon as lmms_medhorizon
from medhorizon_tasks.adapters.lmms_eval import sureon as lmms_sureon
from medhorizon_tasks.adapters.lmms_eval import surghi as lmms_surghi
from medhorizon_tasks.adapters.lmms_eval.runner import task_path
from medhorizon_tasks.adapters.vlmeval import launch
from medhorizon_tasks.adapters.vlmeval.frames import FrameStore, OutcomeLog
from medhorizon_tasks.adapters.vlmeval.outputs import read_predictions
from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for
from medhorizon_tasks.adapters.vlmeval.stamp import expected_stamp, reusable_files, stale_problems, stamp_path
from medhorizon_tasks.benchmarks.medhorizon import scoring as medhorizon_scoring
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting
from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.runs.launch import RunStart

# ------------------------------------------------------------------ presets = the lmms-eval tasks' settings


class _Tolerant(yaml.SafeLoader):
    pass


_Tolerant.add_multi_constructor("!", lambda loader, suffix, node: None)


def _task_kwargs(task: str) -> dict:
    """The ``default`` lmms_eval_specific_kwargs of an lmms-eval task, following ``include:`` (a shallow
    update, as lmms-eval merges)."""
    folder = task_path()
    path = next(p for p in folder.glob("*.yaml") if yaml.load(p.read_text(), _Tolerant).get("task") == task)
    chain = []
    while path is not None:
        cfg = yaml.load(path.read_text(), _Tolerant)
        chain.append(cfg)
        path = folder / cfg["include"] if cfg.get("include") else None
    merged: dict = {}
    for cfg in reversed(chain):
        merged.update(cfg)
    return merged["lmms_eval_specific_kwargs"]["default"]


def test_every_preset_has_the_frame_setting_of_its_lmms_eval_twin():
    twins = [p for p in PRESETS.values() if p.lmms_task]
    assert len(twins) >= 50
    for p in twins:
        theirs = _task_kwargs(p.lmms_task)
        if p.benchmark == "medhorizon":
            assert FrameSetting.from_kwargs(p.kwargs) == FrameSetting.from_kwargs(theirs), p.name
        elif p.benchmark == "sureon":
            assert (p.kwargs["mode"], p.kwargs.get("blur")) == (theirs.get("mode", "visual"), theirs.get("blur")), \
                p.name
        else:
            assert {k: float(v) for k, v in p.kwargs.items()} == {k: float(v) for k, v in theirs.items()}, p.name
    names = set(PRESETS)
    for cap in (64, 128, 256, 512, 1248):
        assert {f"MedHorizon_cap{cap}", f"MedHorizon_Synthetic_cap{cap}"} <= names
    assert {"MedHorizon_text", "MedHorizon_oracle", "MedHorizon_frames32", "MedHorizon_order_reverse",
            "MedHorizon_sampling_hybrid_64", "Sureon_visual", "Sureon_Synthetic_blind", "Sureon_visual_noblur",
            "Sureon_Synthetic_visual_noblur", "SurgHiBench", "SurgHiBench_Synthetic"} <= names


# ------------------------------------------------------------------ frame store and outcome log


def _plan(n):
    return FramePlan(tuple(range(0, 3 * n, 3)), tuple(i / 10 for i in range(n)), "test")


@pytest.fixture()
def fake_video(tmp_path):
    path = tmp_path / "v.mp4"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 1 << 16, dtype=np.uint8).tobytes())
    return path


def test_frame_store_is_lossless_and_decodes_a_plan_once_across_threads(tmp_path, fake_video):
    from PIL import Image

    frames = np.random.default_rng(0).integers(0, 256, (5, 24, 32, 3), dtype=np.uint8)
    calls = []

    def decode():
        calls.append(1)
        return frames

    store, results = FrameStore(tmp_path / "store"), []
    threads = [threading.Thread(target=lambda: results.append(store.frame_files(fake_video, _plan(5), 448, decode)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 4 and all(r == results[0] for r in results)
    back = np.stack([np.asarray(Image.open(f).convert("RGB")) for f in results[0]])
    assert np.array_equal(back, frames)
    assert [Path(f).suffix for f in results[0]] == [".png"] * 5
    # another plan, another frame size, or another video: another folder
    assert store.folder(fake_video, _plan(4), 448) != store.folder(fake_video, _plan(5), 448)
    assert store.folder(fake_video, _plan(5), None) != store.folder(fake_video, _plan(5), 448)
    store.frame_files(fake_video, _plan(5), 448, decode)
    assert len(calls) == 1, "a later process or model reads the files"


def test_a_video_error_is_not_stored(tmp_path, fake_video):
    store = FrameStore(tmp_path)

    def broken():
        raise VideoError("corrupt packet", uid="7")

    with pytest.raises(VideoError, match="item 7: corrupt packet"):
        store.frame_files(fake_video, _plan(3), 448, broken)
    ok = store.frame_files(fake_video, _plan(3), 448, lambda: np.zeros((3, 4, 4, 3), np.uint8))
    assert len(ok) == 3


def test_outcome_log_keeps_the_last_outcome_of_each_item(tmp_path):
    log = OutcomeLog(tmp_path / "m_D_video_outcomes.jsonl")
    assert log.read() == {}
    log.record("1", "item 1: video file not found", 0)
    log.record("2", None, 8)
    log.record("1", None, 8)  # a resumed run built the prompt again
    with open(log.path, "a") as fh:
        fh.write('{"uid": "3", "err')  # cut by a crash
    assert log.read() == {"1": None, "2": None}


def test_predictions_are_read_exactly_as_written(tmp_path):
    import csv

    import pandas as pd

    texts = ["", "NA", "None", "null", "nan", "=A+1", "x" * 40_000, "a\x00b\r\nc\td\"e", "\x1b[31m\x7f\u2028"]
    path = tmp_path / "m_D.tsv"
    pd.DataFrame({"index": range(len(texts)), "question": "q", "prediction": texts}).to_csv(
        path, sep="\t", index=False, quoting=csv.QUOTE_ALL)  # how VLMEvalKit's dump writes TSV
    assert read_predictions(path) == dict(enumerate(texts))
    with pytest.raises(Exception, match="must be a TSV"):
        read_predictions(tmp_path / "m_D.xlsx")


# ------------------------------------------------------------------ stale predictions


def test_reusable_files_are_those_vlmeval_would_reuse(tmp_path):
    names = ["m_D.tsv", "m_D.xlsx", "02_m_D.pkl", "m_D_PREV.pkl", "m_D_1.0fps_nopack_checkpoint.pkl",
             "m_D_64frame_nopack_structs.pkl", "m_D_video_outcomes.jsonl",
             "m_D_records.jsonl", "m_D_report.json", "m_D2.tsv", "m_D_x.tsv", "status.json"]
    for n in names:
        (tmp_path / n).write_text("x")
    assert [p.name for p in reusable_files(tmp_path, "m", "D")] == sorted(names[:7])


def test_predictions_of_another_version_or_data_are_refused(tmp_path):
    want = {"package": "medhorizon-tasks", "version": "9.9", "data_version": "sha256:aa", "limit": None}
    runs = {"MedHorizon_Synthetic_text": (PRESETS["MedHorizon_Synthetic_text"], want)}
    root = tmp_path / "m"
    root.mkdir()
    assert stale_problems(tmp_path, ["m"], runs) == []
    (root / "m_MedHorizon_Synthetic_text.tsv").write_text("index\tprediction\n")
    (problem,) = stale_problems(tmp_path, ["m"], runs)
    assert "m_MedHorizon_Synthetic_text.tsv" in problem and "no medhorizon-tasks stamp" in problem
    stamp_path(root, "m", "MedHorizon_Synthetic_text").write_text(json.dumps({**want, "data_version": "sha256:bb"}))
    (problem,) = stale_problems(tmp_path, ["m"], runs)
    assert "data_version ('sha256:bb' there, 'sha256:aa' now)" in problem
    stamp_path(root, "m", "MedHorizon_Synthetic_text").write_text(json.dumps(want))
    assert stale_problems(tmp_path, ["m"], runs) == []


def test_the_stamp_covers_the_videos(twins, synthetic, tmp_path, monkeypatch):
    """Issue 21: after a missing video was put in place (or the root changed), old predictions were reused."""
    root = twins.root(tmp_path / "videos", synthetic)
    (root / twins.video_path).unlink()
    monkeypatch.setenv("MEDHORIZON_DATA", str(twins.data))
    monkeypatch.setenv("MEDHORIZON_VIDEO_ROOT", str(root))
    oracle, text = PRESETS["MedHorizon_oracle"], PRESETS["MedHorizon_text"]
    stamp = expected_stamp(oracle, None, progress=False)
    assert stamp["videos"].pop(twins.video_path) is None and len(stamp["videos"]) == 1
    assert all(v.startswith("xxh128:") for v in stamp["videos"].values())
    stamp = expected_stamp(oracle, None, progress=False)
    assert expected_stamp(text, None, progress=False)["videos"] is None, "a text-only run uses no video"
    work = tmp_path / "work"
    (work / "m").mkdir(parents=True)
    (work / "m" / "m_MedHorizon_oracle.tsv").write_text("index\tprediction\n0\tA\n")
    runs = {"MedHorizon_oracle": (oracle, stamp)}
    from medhorizon_tasks.adapters.vlmeval.stamp import write_stamps

    write_stamps(work, ["m"], runs)
    assert stale_problems(work, ["m"], runs) == []

    twins.root(root, synthetic)  # the missing video put in place
    now = {"MedHorizon_oracle": (oracle, expected_stamp(oracle, None, progress=False))}
    (problem,) = stale_problems(work, ["m"], now)
    assert f"videos (made from other video files: {twins.video_path} (missing then))" in problem
    moved = twins.root(tmp_path / "elsewhere", synthetic)  # the same bytes under another root: the same videos
    monkeypatch.setenv("MEDHORIZON_VIDEO_ROOT", str(moved))
    assert expected_stamp(oracle, None, progress=False) == now["MedHorizon_oracle"][1]


def test_the_launcher_refuses_before_loading_vlmeval(synthetic, tmp_path, capsys, monkeypatch):
    """Stale predictions and a failing pre-flight stop the run with exit status 2 and the reason."""
    work = tmp_path / "work"
    (work / "m").mkdir(parents=True)
    (work / "m" / "m_MedHorizon_Synthetic_text.tsv").write_text("index\tprediction\n0\tA\n")
    from medhorizon_tasks.commands.main import main  # the user's command: everything after `vlmeval` is VLMEvalKit's

    assert main(["vlmeval", "--model", "m", "--data", "MedHorizon_Synthetic_text", "--work-dir", str(work)]) == 2
    err = capsys.readouterr().err
    assert "refusing to run" in err and "m_MedHorizon_Synthetic_text.tsv" in err
    # the release presets get the lmms-eval path's pre-flight: same message, same status
    monkeypatch.setenv("MEDHORIZON_DATA", str(tmp_path / "nowhere.jsonl"))
    assert launch.run_cli(["--model", "m", "--data", "MedHorizon_cap64", "--work-dir", str(work)]) == 2
    assert "medhorizon pre-flight failed" in capsys.readouterr().err
    assert launch.run_cli(["--data", "MedHorizon_cap64"]) == 2
    assert "name the models and datasets" in capsys.readouterr().err


def _status(work: Path, model: str, datasets: dict) -> None:
    import datetime

    now = datetime.datetime.now().isoformat()
    (work / model).mkdir(parents=True, exist_ok=True)
    (work / model / "status.json").write_text(json.dumps(
        {"datasets": {name: {"updated_at": now, **entry} for name, entry in datasets.items()}}))


def test_every_way_a_vlmeval_run_can_fail_is_a_reason(tmp_path):
    """VLMEvalKit exits 0 in each of these; the launcher's verdict names each one."""

    work = tmp_path / "work"
    since = RunStart(work)
    ours = PRESETS["MedHorizon_Synthetic_cap64"]
    _status(work, "m", {"Theirs_skipped": {"status": "skipped", "skip_reason": "unsupported_model"},
                        "Theirs_empty": {"status": "done", "metrics": {}},
                        "MedHorizon_Synthetic_cap64": {"status": "done", "metrics": {"accuracy": 0.5}}})
    v = launch.judge_vlmeval_run(work, ["m"], {"Theirs_skipped": None, "Theirs_empty": None, "Theirs_absent": None,
                                               "MedHorizon_Synthetic_cap64": ours}, since,
                                 crashed="RuntimeError: out of memory")
    reasons = "\n".join(v.reasons)
    assert v.exit_code == 1
    assert "VLMEvalKit stopped with RuntimeError: out of memory" in reasons
    assert "m x Theirs_skipped was skipped by VLMEvalKit (unsupported_model)" in reasons
    assert "m x Theirs_empty produced no metrics" in reasons
    assert "m x Theirs_absent was not evaluated" in reasons
    assert "m x MedHorizon_Synthetic_cap64 produced no metrics (no report written by this run)" in reasons
    # an --mode infer run is judged on inference only
    _status(work, "m2", {"Theirs": {"status": "skipped", "skip_reason": "mode_infer"}})
    assert launch.judge_vlmeval_run(work, ["m2"], {"Theirs": None}, since, mode="infer").ok
    # a status.json from before the run is not this run's
    assert "m x Theirs_empty was not evaluated" in "\n".join(
        launch.judge_vlmeval_run(work, ["m"], {"Theirs_empty": None}, RunStart(work)).reasons)


def test_a_run_with_a_relative_work_dir_is_judged_on_its_files(tmp_path, monkeypatch):
    """`--work-dir out/` (the README's examples): status.json names the predictions relative to the working
    directory; the verdict finds the report and records beside them."""

    monkeypatch.chdir(tmp_path)
    since = RunStart(tmp_path)
    monkeypatch.delenv("MEDHORIZON_ALLOW_VIDEO_ERRORS", raising=False)
    _status(Path("out"), "m", {"MedHorizon_Synthetic_cap64": {
        "status": "done", "prediction_file": "out/m/m_MedHorizon_Synthetic_cap64.tsv", "metrics": {"accuracy": 1.0}}})
    stem = Path("out/m/m_MedHorizon_Synthetic_cap64")
    stem.with_name(stem.name + "_report.json").write_text(json.dumps({"overall": {"accuracy": 1.0, "missing": 0}}))
    stem.with_name(stem.name + "_records.jsonl").write_text(json.dumps({"uid": "0", "error": None}) + "\n")
    v = launch.judge_vlmeval_run(Path("out"), ["m"], {"MedHorizon_Synthetic_cap64": PRESETS[
        "MedHorizon_Synthetic_cap64"]}, since)
    assert v.ok, v.reasons


def test_items_the_model_gave_no_answer_to_fail_the_vlmeval_run(synthetic, tmp_path):
    """VLMEvalKit's own failure string and an empty reply, recorded by the dataset's scorer, are listed by uid."""

    since = RunStart(tmp_path)
    name = "MedHorizon_Synthetic_cap64"
    proto = protocol_for(PRESETS[name])
    raws = ["Failed to obtain answer via API. ", "", *[it.answer for it in proto.units[2:5]]]
    records = [proto.record(it, raw, None) for it, raw in zip(proto.units, raws)]
    _status(tmp_path, "m", {name: {"status": "done", "metrics": {"accuracy": 0.6}}})
    stem = tmp_path / "m" / f"m_{name}"
    stem.with_name(stem.name + "_report.json").write_text(json.dumps(proto.report(proto.units[:5], records)))
    stem.with_name(stem.name + "_records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    v = launch.judge_vlmeval_run(tmp_path, ["m"], {name: PRESETS[name]}, since)
    assert v.exit_code == 1 and len(v.reasons) == 1
    assert v.reasons[0] == (f"m x {name}: 2 item(s) got no answer from the model (1 request_error, 1 truncated) and "
                            f"were counted wrong: item {proto.units[0].uid}: request_error (Failed to obtain answer "
                            f"via API.); item {proto.units[1].uid}: truncated (empty reply)")


def test_only_the_framework_shell_imports_vlmeval():
    """The launcher's checks, the protocols and the frame store load without VLMEvalKit (~30 s, ~1 GB), and
    nothing outside adapters/vlmeval imports it."""
    import ast
    import subprocess
    import sys

    light = ["launch", "protocols", "presets", "frames", "stamp", "outputs", "sources"]
    code = ("import sys\n" + "".join(f"import medhorizon_tasks.adapters.vlmeval.{m}\n" for m in light)
            + "assert 'vlmeval' not in sys.modules, sorted(m for m in sys.modules if m.startswith('vlmeval'))")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
    src = Path(launch.__file__).parents[2]
    for path in src.rglob("*.py"):
        if "adapters/vlmeval" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "vlmeval" or n.startswith("vlmeval.") for n in names), path


# ------------------------------------------------------------------ both adapters call the same functions


class _LmmsTask:
    """Enough of lmms-eval's ConfigurableTask for ``task_kwargs()`` to find the task's kwargs."""

    def __init__(self, kwargs):
        self.lmms_eval_specific_kwargs, self.config = kwargs, None

    def process_results(self, hook, doc, results):
        return hook(doc, results)


RAWS = ["B", "<think>A?</think> The answer is C.", "", "NA", "I cannot tell.", "first > second > third",
        # failures (core.responses): lmms-eval's placeholder, VLMEvalKit's FAIL_MSG, the bridge's markers
        "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 400 - Unsupported parameter. Answer: B",
        "Failed to obtain answer via API.", "[MEDHORIZON_TRUNCATED: finish_reason=length] The answer is C"]


def test_medhorizon_prompts_frames_and_records_equal_the_lmms_eval_hooks(synthetic, tmp_path, monkeypatch):
    from PIL import Image

    store = FrameStore(tmp_path)
    for name in ("MedHorizon_Synthetic_cap64", "MedHorizon_Synthetic_oracle", "MedHorizon_Synthetic_text",
                 "MedHorizon_Synthetic_order_reverse"):
        proto = protocol_for(PRESETS[name])
        kwargs = PRESETS[name].kwargs
        for item in proto.units[:3]:
            doc = {**item.to_record(), "video_root": str(proto.source.video_root)}
            text, files, error = proto.prompt(item, store)
            assert error is None and text == lmms_medhorizon.doc_to_text(doc, kwargs), name
            theirs = lmms_medhorizon.doc_to_visual(doc, kwargs)
            ours = [np.asarray(Image.open(f).convert("RGB")) for f in files]
            assert len(ours) == len(theirs) and all(np.array_equal(a, np.asarray(b)) for a, b in zip(ours, theirs))
            for raw in RAWS:
                lmms_record = _LmmsTask(kwargs).process_results(lmms_medhorizon.process_results, doc, [raw])
                assert proto.record(item, raw, None) == lmms_record["accuracy"]
    # the records come from the very scorer the lmms-eval hook calls
    seen = []
    real = medhorizon_scoring.score_item
    monkeypatch.setattr(medhorizon_scoring, "score_item", lambda *a: seen.append(a) or real(*a))
    proto = protocol_for(PRESETS["MedHorizon_Synthetic_text"])
    item = proto.units[0]
    doc = {**item.to_record(), "video_root": str(proto.source.video_root)}
    _LmmsTask({"mode": "text"}).process_results(lmms_medhorizon.process_results, doc, ["C"])
    proto.record(item, "C", None)
    assert seen == [(item, "C", "text")] * 2


def test_sureon_noblur_keeps_its_own_frames_and_finds_its_blind_run(tmp_path):
    """Blurred and raw frames of the same plan go to different folders of the frame store; the noblur preset's
    report has the multimodal gain from the blind run beside it, as the visual one has."""
    from medhorizon_tasks.adapters.vlmeval.outputs import records_path
    from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring

    store = FrameStore(tmp_path / "frames")
    blurred, raw = (protocol_for(PRESETS[n]) for n in ("Sureon_Synthetic_visual", "Sureon_Synthetic_visual_noblur"))
    assert blurred.blur and not raw.blur
    item = blurred.units[0]
    files_blurred, files_raw = blurred.prompt(item, store)[1], raw.prompt(item, store)[1]
    assert len(files_blurred) == len(files_raw) == 8 and not set(files_blurred) & set(files_raw)
    assert {Path(f).parent.name for f in files_blurred} != {Path(f).parent.name for f in files_raw}
    work = tmp_path / "work"
    work.mkdir()
    blind = [sureon_scoring.score_item(it, "B", "blind") for it in raw.units]
    records_path(work / "m_Sureon_Synthetic_blind.tsv").write_text("".join(json.dumps(r) + "\n" for r in blind))
    visual = [sureon_scoring.score_item(it, "A", "visual") for it in raw.units]
    for proto, name in ((raw, "Sureon_Synthetic_visual_noblur"), (blurred, "Sureon_Synthetic_visual")):
        rep = proto.report(proto.units, visual, work / f"m_{name}.tsv")
        assert rep["mg"]["overall"] == pytest.approx(rep["mu"]["accuracy"] - sureon_scoring.report(blind)["mu"]["accuracy"])


def test_sureon_and_surghi_prompts_and_records_equal_the_lmms_eval_hooks(synthetic, tmp_path):
    store = FrameStore(tmp_path)
    for name in ("Sureon_Synthetic_visual", "Sureon_Synthetic_blind", "Sureon_Synthetic_visual_noblur"):
        proto = protocol_for(PRESETS[name])
        kwargs = PRESETS[name].kwargs
        raw_lines = {json.loads(x)["uid"]: x for x in proto.source.data.read_text().splitlines() if x.strip()}
        for item in proto.units[::7]:
            doc = {"uid": item.uid, "category": item.category, "item_json": raw_lines[item.uid],
                   "video_root": str(proto.source.video_root)}
            text, files, _ = proto.prompt(item, store)
            assert text == lmms_sureon.doc_to_text(doc, kwargs)
            assert len(files) == len(lmms_sureon.doc_to_visual(doc, kwargs))
            for raw in RAWS:
                lmms_record = _LmmsTask(kwargs).process_results(lmms_sureon.process_results, doc, [raw])
                assert proto.record(item, raw, None) == lmms_record["accuracy"]
    proto = protocol_for(PRESETS["SurgHiBench_Synthetic"])
    lmms_surghi.process_docs_synthetic(None)  # loads the hierarchies the hooks use
    kwargs = PRESETS["SurgHiBench_Synthetic"].kwargs
    for row in proto.units[::17]:
        doc = {"dataset": row.dataset, "video": row.video, "frame": row.frame, "phase": row.phase,
               "step": row.step, "timestamp_s": row.timestamp_s, "video_path": row.video_path,
               "video_root": str(proto.source.video_root)}
        assert proto.prompt(row, store)[0] == lmms_surghi.doc_to_text(doc, kwargs)
        for raw in ['{"phase": "x", "step": "y"}', proto.prompt(row, store)[0][-80:], ""]:
            lmms_record = _LmmsTask(kwargs).process_results(lmms_surghi.process_results, doc, [raw])
            assert proto.record(row, raw, None) == lmms_record["phase_acc"]


def test_sureon_summaries_are_judged_only_when_a_judge_is_asked_for(synthetic, tmp_path):
    from medhorizon_tasks.core.judge import Verdict

    proto = protocol_for(PRESETS["Sureon_Synthetic_visual"])
    pred = tmp_path / "m_Sureon_Synthetic_visual.tsv"
    assert proto.judge({"model": "exact_matching"}, pred) is None  # what the launcher passes without --judge
    assert protocol_for(PRESETS["MedHorizon_Synthetic_text"]).judge({"model": "judge-7b"}, pred) is None
    judge = proto.judge({"model": "judge-7b", "api_base": "http://127.0.0.1:9/v1/chat/completions", "key": "k"}, pred)
    assert (judge.config.model, judge.config.endpoint, judge.config.api_key) == \
           ("judge-7b", "http://127.0.0.1:9/v1/chat/completions", "k")
    sm = next(it for it in proto.units if it.kind == "sm")
    asked = []
    record = proto.record(sm, "<think>...</think> cut, then clip", None,
                          judge=lambda **kw: asked.append(kw) or Verdict(True, "all steps", ""))
    assert record["status"] == "ok" and record["correct"] is True and asked[0]["uid"] == sm.uid
    assert proto.record(sm, "cut, then clip", None)["status"] == "not_judged"
