"""The three protocols through VLMEvalKit's own ``run.main`` (via ``medhorizon-tasks vlmeval``), against lmms-eval.

One launcher process runs four models over six datasets: the needle and random
probes, a replay model that answers with tricky raw texts, and a model that
crashes on one dataset; the datasets are the three synthetic protocols (MedHorizon
cap 64 and oracle, Sureon blind and visual, SurgHiBench) and the MedHorizon release
preset over a small broken release (one good, one missing, one corrupt video;
``MEDHORIZON_ALLOW_VIDEO_ERRORS=1``). Two lmms-eval runs (needle, random) over the
same data are the reference. Every assertion is on the files the runs wrote and
the numbers in them; VLMEvalKit itself exits 0 whatever happens.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV, run_lmms_eval
from medhorizon_tasks.adapters.vlmeval.outputs import read_predictions
from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for
from medhorizon_tasks.adapters.vlmeval.sources import DataSource
from medhorizon_tasks.benchmarks.medhorizon import scoring as medhorizon_scoring
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting
from medhorizon_tasks.benchmarks.medhorizon.protocol import load_frames as medhorizon_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.standard import setting_departures
from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring
from medhorizon_tasks.benchmarks.sureon.protocol import load_frames as sureon_frames
from medhorizon_tasks.benchmarks.sureon.protocol import prompt_parts as sureon_prompt_parts
from medhorizon_tasks.benchmarks.surghi import scoring as surghi_scoring
from medhorizon_tasks.benchmarks.surghi.protocol import load_frames as surghi_frames
from medhorizon_tasks.benchmarks.surghi.protocol import predicted_labels
from medhorizon_tasks.core.jsonl import iter_jsonl
from medhorizon_tasks.core.predictions import failed_responses
from medhorizon_tasks.core.text import report_json
from medhorizon_tasks.data.synthetic.probes import image_digest

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
SYNTHETIC = ["MedHorizon_Synthetic_cap64", "MedHorizon_Synthetic_oracle", "Sureon_Synthetic_blind",
             "Sureon_Synthetic_visual", "SurgHiBench_Synthetic"]
RELEASE = "MedHorizon_cap64"
LMMS = {"MedHorizon_Synthetic_cap64": "medhorizon_synthetic", "Sureon_Synthetic_blind": "sureon_synthetic_blind",
        "Sureon_Synthetic_visual": "sureon_synthetic_visual", "SurgHiBench_Synthetic": "surghi_synthetic"}
LONG = ("The frames show a long laparoscopic procedure. " * 900)[:39_990] + " Answer: D"
TRICKY = ["", "NA", "None", "null", "nan", "=A+1", "<think>The frames suggest A.</think> The answer is C.",
          "<analysis>B is likely</analysis> Final answer: D", LONG, "A\x00\x01\x07\x0b\x0c\x1b[31m\x7f\u2028",
          "\r\nB\r", 'tab\there "quoted" B', "</think> B", '{"phase": "x", "step": "y"}', "答案是C"]


def _env(lmu: Path, broken) -> dict:
    data, root, _ = broken
    return {**os.environ, **OFFLINE_ENV, "LMUData": str(lmu), "MEDHORIZON_DATA": str(data),
            "MEDHORIZON_VIDEO_ROOT": str(root), "MEDHORIZON_ALLOW_VIDEO_ERRORS": "1", "OMP_NUM_THREADS": "1",
            "CUDA_VISIBLE_DEVICES": ""}


def _launch(cmd: list[str], cfg: dict, out: Path, broken) -> tuple[subprocess.CompletedProcess, Path]:
    lmu, work = out / "lmu", out / "work"
    lmu.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(cfg))
    proc = subprocess.run([*cmd, "--config", str(out / "config.json"), "--work-dir", str(work)],
                          env=_env(lmu, broken), capture_output=True, text=True, timeout=3000, cwd=out)
    (out / "launcher.log").write_text(proc.stdout + proc.stderr)
    return proc, work


@pytest.fixture(scope="module")
def vlm(synthetic, broken_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("vlmeval")
    (out / "tricky.json").write_text(json.dumps(TRICKY))
    cfg = {"model": {"medhorizon_needle": {"class": "MedHorizonNeedleProbe", "record_path": str(out / "seen.jsonl")},
                     "medhorizon_random": {},
                     "replay": {"class": "ReplayModel", "outputs": str(out / "tricky.json")},
                     "crash": {"class": "CrashModel", "crash_on": ["Sureon_Synthetic_blind"]}},
           "data": {name: {} for name in [*SYNTHETIC, RELEASE]}}
    proc, work = _launch([sys.executable, str(HERE / "vlmeval_launch.py")], cfg, out, broken_release)
    return proc, work, out


@pytest.fixture(scope="module")
def lmms(synthetic, broken_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("lmms")
    data, root, _ = broken_release
    env = {"MEDHORIZON_DATA": str(data), "MEDHORIZON_VIDEO_ROOT": str(root), "MEDHORIZON_ALLOW_VIDEO_ERRORS": "1"}
    tasks = list(LMMS.values())
    return {"medhorizon_needle": run_lmms_eval("medhorizon_needle", [*tasks, "medhorizon"], out / "needle", env=env),
            "medhorizon_random": run_lmms_eval("medhorizon_random", tasks, out / "random")}


def _records(work: Path, model: str, dataset: str) -> list[dict]:
    return [rec for _, rec in iter_jsonl(work / model / f"{model}_{dataset}_records.jsonl")]


def _proto(name: str, broken):
    """The dataset's protocol (units, source) as the launcher built it; the release one reads the broken release."""
    if name == RELEASE:
        return protocol_for(PRESETS[name], DataSource(broken[0], broken[1]))
    return protocol_for(PRESETS[name])


def _report(work: Path, model: str, dataset: str) -> dict:
    return json.loads((work / model / f"{model}_{dataset}_report.json").read_text())


def _clean(report: dict) -> dict:
    return json.loads(report_json(report))


def _seen(out: Path) -> dict[str, list[dict]]:
    by_dataset: dict[str, list[dict]] = {}
    for _, rec in iter_jsonl(out / "seen.jsonl"):
        by_dataset.setdefault(rec["dataset"], []).append(rec)
    return by_dataset


def test_the_synthetic_protocols_run_end_to_end_through_vlmeval(vlm, broken_release):
    proc, work, out = vlm
    status = {m: json.loads((work / m / "status.json").read_text())["datasets"]
              for m in ("medhorizon_needle", "medhorizon_random", "replay")}
    for model, datasets in status.items():
        for name in [*SYNTHETIC, RELEASE]:
            assert datasets[name]["status"] == "done" and not datasets[name].get("error_message"), (model, name)
            assert datasets[name]["metrics"], (model, name)
            n = len(_proto(name, broken_release).units)
            assert len(read_predictions(work / model / f"{model}_{name}.tsv")) == n
    needle = {name: _report(work, "medhorizon_needle", name) for name in SYNTHETIC}
    assert needle["MedHorizon_Synthetic_oracle"]["overall"]["accuracy"] == 1.0
    assert 0.3 < needle["MedHorizon_Synthetic_cap64"]["overall"]["accuracy"] < 1.0, "cap 64 misses sparse evidence"
    assert needle["Sureon_Synthetic_visual"]["mu"]["accuracy"] == 1.0
    assert needle["Sureon_Synthetic_blind"]["mu"]["accuracy"] == 0.0
    assert needle["Sureon_Synthetic_visual"]["mg"]["overall"] == 1.0, "the blind records beside it give MG"
    assert needle["SurgHiBench_Synthetic"]["overall"]["multi_level"] > 0.85
    oracle = status["medhorizon_needle"]["MedHorizon_Synthetic_oracle"]
    assert oracle["primary_metric"] == "accuracy" and oracle["metrics"]["accuracy"] == 1.0
    random = _report(work, "medhorizon_random", "MedHorizon_Synthetic_oracle")["overall"]["accuracy"]
    assert 0.1 < random < 0.45


def test_the_authors_rule_is_reported_beside_the_default(vlm, broken_release):
    """Both accuracies and the disagreement count: in each MedHorizon report, in status.json's metrics, and in
    one launcher line per MedHorizon dataset (none for the other benchmarks)."""
    proc, work, _ = vlm
    lines = [x for x in proc.stderr.splitlines() if " under the default rule " in x]
    for model in ("medhorizon_needle", "medhorizon_random", "replay"):
        status = json.loads((work / model / "status.json").read_text())["datasets"]
        for name in ("MedHorizon_Synthetic_cap64", "MedHorizon_Synthetic_oracle", RELEASE):
            o = _report(work, model, name)["overall"]
            expected = medhorizon_scoring.report(_records(work, model, name))["overall"]
            assert (o["accuracy_authors"], o["rules_disagree"]) == (pytest.approx(expected["accuracy_authors"]),
                                                                    expected["rules_disagree"]), (model, name)
            metrics = status[name]["metrics"]
            assert metrics["accuracy_authors"] == pytest.approx(o["accuracy_authors"])
            assert metrics["rules_disagree"] == o["rules_disagree"]
            line = (f"medhorizon-tasks: {model} x {name}: Ov. under the default rule {100 * o['accuracy']:.1f}%, "
                    f"under the authors' rule {100 * o['accuracy_authors']:.1f}%; the rules disagree on "
                    f"{o['rules_disagree']} of {o['n']} items")
            assert line in lines, (model, name)
    medhorizon = ("MedHorizon_Synthetic_cap64", "MedHorizon_Synthetic_oracle", RELEASE)
    assert all(any(f" x {name}: " in x for name in medhorizon) for x in lines), "MedHorizon datasets only"
    assert len(lines) == len(set(lines)) >= 9
    replay = _report(work, "replay", "MedHorizon_Synthetic_cap64")["overall"]
    assert replay["rules_disagree"] > 0, "'<think>...A.</think> The answer is C.' reads A under the authors' rule"
    needle = _report(work, "medhorizon_needle", "MedHorizon_Synthetic_oracle")["overall"]
    assert needle["accuracy"] == 1.0 and needle["accuracy_authors"] < 1.0


def test_a_failing_dataset_makes_the_launcher_fail_with_the_reason(vlm):
    """The crashed dataset, and each dataset where the replay model's empty output (TRICKY[0]) was no answer: a
    reason of its own naming the items; nothing else failed."""
    proc, work, _ = vlm
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = [x for x in proc.stderr.splitlines() if x.startswith("medhorizon-tasks: VLMEvalKit run")]
    assert len(lines) == 1 and lines[0].startswith("medhorizon-tasks: VLMEvalKit run FAILED: ")
    reasons = [lines[0].split("FAILED: ", 1)[1], *(x[len("  also: "):] for x in proc.stderr.splitlines()
                                                   if x.startswith("  also: "))]
    assert [r for r in reasons if r.startswith("crash x")] == [next(r for r in reasons if r.startswith(
        "crash x Sureon_Synthetic_blind failed: test model crashed on Sureon_Synthetic_blind"))]
    expected = {}
    for name in [*SYNTHETIC, RELEASE]:
        failed = failed_responses(r for r in _records(work, "replay", name) if not r.get("error"))
        if failed:
            expected[name] = failed
    assert set(expected) >= set(SYNTHETIC), "the empty output is no answer in every benchmark"
    for name, failed in expected.items():
        assert all(f["status"] == "truncated" and f["reason"] == "empty reply" for f in failed)
        (reason,) = [r for r in reasons if r.startswith(f"replay x {name}: ")]
        assert f"{len(failed)} item(s) got no answer from the model ({len(failed)} truncated)" in reason
        assert f"item {failed[0]['uid']}: truncated (empty reply)" in reason
    assert len(reasons) == 1 + len(expected), "nothing else failed"
    notes = [x for x in proc.stderr.splitlines() if x.startswith("  note:")]
    assert len(notes) == 4 and all(f"x {RELEASE}:" in n and "MEDHORIZON_ALLOW_VIDEO_ERRORS is set" in n for n in notes)


def test_the_needle_sees_exactly_the_planned_frames_in_order(vlm, broken_release):
    _, work, out = vlm
    seen = _seen(out)
    checked = 0
    for name in ("MedHorizon_Synthetic_cap64", "MedHorizon_Synthetic_oracle", "Sureon_Synthetic_visual",
                 "SurgHiBench_Synthetic"):
        proto = protocol_for(PRESETS[name])
        assert len(seen[name]) == len(proto.units)
        for unit, rec in list(zip(proto.units, seen[name]))[::5]:
            root = proto.source.video_root
            if proto.preset.benchmark == "medhorizon":
                plan, frames = medhorizon_frames(unit, FrameSetting.from_kwargs(proto.preset.kwargs), root)
            elif proto.preset.benchmark == "sureon":
                plan, frames = sureon_frames(unit, root)
            else:
                plan, frames = surghi_frames(unit, root, **proto.window)
            assert rec["images"] == [image_digest(f) for f in frames], (name, proto.uid(unit))
            if proto.preset.benchmark == "sureon":  # interleaved (Fig. 17): the model's text parts, in order
                texts = [p for p in sureon_prompt_parts(unit, plan) if isinstance(p, str)]
                assert rec["prompt"] == "\n".join(texts) and texts[1].startswith("Frame 1 at ")
            else:
                assert rec["prompt"] == proto.prompt(unit, _NoFrames())[0]
            checked += 1
    assert checked > 60
    _, _, uids = broken_release
    items = load_release(broken_release[0])
    for item, rec in zip(items, seen[RELEASE]):
        assert (rec["n_images"] == 0) == (item.uid not in uids["good"]), item.uid


class _NoFrames:
    """A frame store that hands out no files (only the prompt text is compared)."""

    def frame_files(self, *args):
        return []


def _medhorizon_lmms(run, task, data) -> dict:
    items = load_release(data)
    preds = medhorizon_scoring.read_predictions(run.samples[task], [it.uid for it in items])
    return {r["uid"]: r for r in medhorizon_scoring.score_predictions(items, preds)}


KEYS = ("raw_output", "extracted", "correct", "status", "error")
# lmms-eval's samples file: the metric under which each task's process_results stored the per-item record
OWN_RECORD = {"medhorizon": "accuracy", "sureon": "accuracy", "surghi": "phase_acc"}
# the headline metric of each dataset: lmms-eval's results.json name and VLMEvalKit's status.json name
HEADLINE = {"medhorizon": ("accuracy", "accuracy"), "sureon": ("accuracy", "mu"),
            "surghi": ("multi_level", "multi_level")}


def _lmms_own_records(run, task: str, benchmark: str) -> list[dict]:
    """The per-item records lmms-eval itself wrote (its process_results output), in doc order."""
    rows = sorted((rec["doc_id"], rec[OWN_RECORD[benchmark]]) for _, rec in iter_jsonl(run.samples[task]))
    return [rec for _, rec in rows]


@pytest.mark.parametrize("model", ["medhorizon_needle", "medhorizon_random"])
def test_both_frameworks_write_the_same_records_and_headline_numbers(vlm, lmms, model):
    """What each framework itself wrote: lmms-eval's per-item records (samples file) and metric (results
    JSON) against VLMEvalKit's records and the metric in its status.json, for the three protocols."""
    _, work, _ = vlm
    run = lmms[model]
    status = json.loads((work / model / "status.json").read_text())["datasets"]
    for dataset, task in LMMS.items():
        benchmark = PRESETS[dataset].benchmark
        theirs = _lmms_own_records(run, task, benchmark)
        ours = _records(work, model, dataset)
        assert len(ours) == len(theirs) == len(protocol_for(PRESETS[dataset]).units), dataset
        assert ours == theirs, dataset
        lmms_name, vlm_name = HEADLINE[benchmark]
        assert status[dataset]["metrics"][vlm_name] == pytest.approx(run.metric(task, lmms_name), abs=1e-12), \
            dataset


@pytest.mark.parametrize("model", ["medhorizon_needle", "medhorizon_random"])
def test_both_frameworks_give_the_same_items_and_reports(vlm, lmms, model):
    _, work, _ = vlm
    run = lmms[model]
    # MedHorizon
    proto = protocol_for(PRESETS["MedHorizon_Synthetic_cap64"])
    theirs = _medhorizon_lmms(run, "medhorizon_synthetic", proto.source.data)
    ours = {r["uid"]: r for r in _records(work, model, "MedHorizon_Synthetic_cap64")}
    assert {u: [r[k] for k in KEYS] for u, r in ours.items()} == {u: [r[k] for k in KEYS] for u, r in theirs.items()}
    assert _report(work, model, "MedHorizon_Synthetic_cap64") == _clean(medhorizon_scoring.report(list(theirs.values())))
    # Sureon, blind and visual (with the multimodal gain)
    proto = protocol_for(PRESETS["Sureon_Synthetic_visual"])
    items, uids = proto.units, [it.uid for it in proto.units]
    lmms_sureon = {}
    for mode in ("blind", "visual"):
        preds = sureon_scoring.read_predictions(run.samples[f"sureon_synthetic_{mode}"], uids)
        lmms_sureon[mode] = sureon_scoring.score_predictions(items, preds, mode=mode)
        ours = _records(work, model, f"Sureon_Synthetic_{mode}")
        assert [[r["uid"], *(r[k] for k in KEYS)] for r in ours] == \
               [[r["uid"], *(r[k] for k in KEYS)] for r in lmms_sureon[mode]], mode
    assert _report(work, model, "Sureon_Synthetic_visual") == \
           _clean(sureon_scoring.report(lmms_sureon["visual"], blind_records=lmms_sureon["blind"]))
    assert _report(work, model, "Sureon_Synthetic_blind") == _clean(sureon_scoring.report(lmms_sureon["blind"]))
    # SurgHiBench
    proto = protocol_for(PRESETS["SurgHiBench_Synthetic"])
    preds = surghi_scoring.read_predictions(run.samples["surghi_synthetic"], proto.hierarchies)
    ours = {(r["dataset"], r["video"], r["frame"]): r for r in _records(work, model, "SurgHiBench_Synthetic")}
    assert len(ours) == len(preds) == len(proto.units)
    for key, p in preds.items():
        assert (ours[key]["pred_phase"], ours[key]["pred_step"], ours[key]["error"]) == (p.phase, p.step, p.error)
    assert _report(work, model, "SurgHiBench_Synthetic") == \
           _clean(surghi_scoring.evaluate(proto.units, preds, proto.hierarchies).report())


def test_video_errors_are_scored_as_lmms_eval_scores_them(vlm, lmms, broken_release):
    _, work, _ = vlm
    data, _, uids = broken_release
    theirs = _medhorizon_lmms(lmms["medhorizon_needle"], "medhorizon", data)
    ours = {r["uid"]: r for r in _records(work, "medhorizon_needle", RELEASE)}
    assert {u: [r[k] for k in KEYS] for u, r in ours.items()} == {u: [r[k] for k in KEYS] for u, r in theirs.items()}
    for uid, r in ours.items():
        if uid in uids["good"]:
            assert r["status"] != "error" and r["error"] is None, uid  # cap 64 may miss the evidence: any answer
        else:
            assert r["status"] == "error" and not r["correct"] and f"item {uid}" in r["error"], uid
    report = _report(work, "medhorizon_needle", RELEASE)
    assert report == _clean(medhorizon_scoring.report(list(theirs.values())))
    assert {e["uid"] for e in report["video_errors"]} == uids["missing"] | uids["corrupt"]
    assert report["overall"]["errors"] == len(uids["missing"] | uids["corrupt"])


def test_tricky_raw_outputs_survive_byte_for_byte_and_score_as_in_lmms_eval(vlm):
    _, work, _ = vlm
    for name in SYNTHETIC:
        proto = protocol_for(PRESETS[name])
        predictions = read_predictions(work / "replay" / f"replay_{name}.tsv")
        assert predictions == {i: TRICKY[i % len(TRICKY)] for i in range(len(proto.units))}, name
        records = _records(work, "replay", name)
        for i, (unit, rec) in enumerate(zip(proto.units, records)):
            raw = TRICKY[i % len(TRICKY)]
            assert rec["raw_output"] == raw
            if proto.preset.benchmark == "medhorizon":
                expected = medhorizon_scoring.score_item(unit, raw, proto.mode)
                departures = setting_departures(proto.setting)  # an oracle or text run says so in every record
                if departures:
                    expected["departures"] = departures
                assert rec == expected, (name, i)
            elif proto.preset.benchmark == "sureon":
                assert rec == {**sureon_scoring.score_item(unit, raw, proto.mode), "raw_output": raw}, (name, i)
            else:
                h = proto.hierarchies[unit.dataset][0]
                assert (rec["pred_phase"], rec["pred_step"]) == predicted_labels(raw, h), (name, i)
    long_rec = _records(work, "replay", "MedHorizon_Synthetic_cap64")[TRICKY.index(LONG)]
    assert len(long_rec["raw_output"]) == 40_000 and long_rec["extracted"] == "D"


def test_two_processes_give_the_same_items_as_one(vlm, broken_release, tmp_path):
    """torchrun with two ranks (gloo on CPU): rank 1's prompts, video errors included, are scored by rank 0."""
    _, work1, _ = vlm
    datasets = ["MedHorizon_Synthetic_cap64", "SurgHiBench_Synthetic", RELEASE]
    cfg = {"model": {"medhorizon_needle": {"class": "MedHorizonNeedleProbe", "record_path": str(tmp_path / "seen.jsonl")}},
           "data": {name: {} for name in datasets}}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "medhorizon_tasks.adapters.vlmeval.launch"]
    proc, work2 = _launch(cmd, cfg, tmp_path, broken_release)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = {json.loads(x)["rank"] for x in (tmp_path / "seen.jsonl").read_text().splitlines()}
    assert ranks == {0, 1}
    for name in datasets:
        one = _records(work1, "medhorizon_needle", name)
        two = _records(work2, "medhorizon_needle", name)
        assert two == one, name
        assert _report(work2, "medhorizon_needle", name) == _report(work1, "medhorizon_needle", name)
    errors = [r for r in _records(work2, "medhorizon_needle", RELEASE) if r["status"] == "error"]
    assert errors and len(errors) == len(broken_release[2]["missing"] | broken_release[2]["corrupt"])
    assert np.all([r["raw_output"] is not None for r in errors])
