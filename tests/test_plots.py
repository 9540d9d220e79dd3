"""The diagnostic figures: valid PNGs of the expected size, missing values, and the results readers."""

import json

import matplotlib.image as mpimg
import pytest

from medhorizon_tasks.benchmarks.medhorizon.scoring import report
from medhorizon_tasks.benchmarks.medhorizon.taxonomy import TASK_CODES, task_type
from medhorizon_tasks.errors import DataError
from medhorizon_tasks.plots import (
    budget_curve,
    load_accuracy_file,
    plot_evidence_settings,
    plot_frame_scaling,
    plot_order,
    plot_per_task,
    plot_sampling,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def acc(base: float, missing=()) -> dict:
    d = {c: min(1.0, base + 0.01 * k) for k, c in enumerate(TASK_CODES)}
    d.update(overall=base, fine_grained=base - 0.01, semantic_reasoning=base + 0.02)
    for m in missing:
        d[m] = None
    return d


def check_png(path, width=None, height=None):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 2000
    img = mpimg.imread(str(path))
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    if width is not None:
        assert img.shape[:2] == (height, width)
    return img


def test_frame_scaling_png(tmp_path):
    curves = {"Qwen3-VL-8B": {4: .25, 8: .255, 16: .26, 32: .258, 64: .262, 128: .27, 256: .268, 512: .255},
              "Lingshu-7B": {4: .24, 16: .26, 32: .27, 64: None, 128: float("nan"), 256: .24, 512: .23},
              "empty": {}}
    out = plot_frame_scaling(curves, tmp_path / "a" / "b" / "scaling.png", title="RQ1")
    assert out == tmp_path / "a" / "b" / "scaling.png"
    check_png(out, 840, 504)


def test_evidence_settings_png_with_missing_values(tmp_path):
    settings = {
        "GT-images": {"Overall": .36, "Fine-grained": .35, "Semantic reasoning": .38},
        "random": {"overall": .25, "fine_grained": .25, "semantic_reasoning": .25},
        "Text": {"overall": .24, "fine_grained": None},
        "Uniform": acc(.26),
    }
    check_png(plot_evidence_settings(settings, tmp_path / "evidence.png"), 840, 504)


def test_per_task_png(tmp_path):
    runs = {"a": acc(.26, missing=("LA", "PR")), "b": acc(.24), "c": {"PR": .3}}
    check_png(plot_per_task(runs, tmp_path / "tasks.png"))


def test_order_png(tmp_path):
    runs = {"original": acc(.265), "reverse": acc(.242), "block shuffle": acc(.245, missing=("CPR",)),
            "local_shuffle": acc(.244)}
    check_png(plot_order(runs, tmp_path / "order.png"))
    check_png(plot_order(runs, tmp_path / "order_summary.png", keys=("overall", "fine_grained", "semantic_reasoning")),
              840, 504)


def test_sampling_png_one_panel_per_budget(tmp_path):
    runs = {s: {32: acc(.25), 64: acc(.26)} for s in ("uniform", "frame-change", "hybrid")}
    runs["hybrid"][64] = {"overall": None}
    img = check_png(plot_sampling(runs, tmp_path / "sampling.png", title="RQ4"))
    single = check_png(plot_sampling({"uniform": {32: acc(.25)}}, tmp_path / "one.png"))
    assert img.shape[0] == 2 * single.shape[0], "two stacked panels"


def test_percent_values_are_rejected_not_guessed(tmp_path):
    with pytest.raises(ValueError, match="fraction"):
        plot_per_task({"a": {"PR": 26.2}}, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_no_pyplot_figures_are_left_open(tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot_order({"original": acc(.2)}, tmp_path / "o.png")
    plot_frame_scaling({"a": {4: .3}}, tmp_path / "f.png")
    assert plt.get_fignums() == before


# ------------------------------------------------------------------ results files

def _records():
    out = []
    for k, code in enumerate(("PR", "PR", "SD", "IR", "IR", "CPR")):
        t = task_type(code)
        out.append({"uid": str(k), "task": code, "family": t.family, "hop": t.hop or 0, "source": "GraSP",
                    "correct": k % 2 == 0, "status": "ok", "error": None})
    return out


def test_load_score_report(tmp_path):
    path = tmp_path / "score.json"
    path.write_text(json.dumps(report(_records())), encoding="utf-8")  # exactly what `score --json` prints
    got = load_accuracy_file(path)
    assert got["overall"] == pytest.approx(0.5)
    assert got["PR"] == 0.5 and got["SD"] == 1.0 and got["IR"] == 0.5 and got["CPR"] == 0.0
    assert got["fine_grained"] == pytest.approx(2 / 3) and got["semantic_reasoning"] == pytest.approx(1 / 3)
    check_png(plot_per_task({"run": got}, tmp_path / "t.png"))


def test_load_lmms_eval_results(tmp_path):
    path = tmp_path / "results_2026.json"
    path.write_text(json.dumps({
        "results": {
            "medhorizon_frames4": {"alias": "medhorizon_frames4", "accuracy,none": 0.25, "accuracy_stderr,none": "N/A"},
            "medhorizon_frames64": {"alias": "medhorizon_frames64", "accuracy,none": 0.27},
            "medhorizon_frames8": {"alias": "x", "accuracy,strict": 0.3},
            "medhorizon_text": {"alias": "medhorizon_text", "accuracy,none": "N/A"},
        },
        "configs": {}, "versions": {},
    }), encoding="utf-8")
    got = load_accuracy_file(path)
    assert got == {"medhorizon_frames4": 0.25, "medhorizon_frames64": 0.27, "medhorizon_frames8": 0.3,
                   "medhorizon_text": None}
    assert budget_curve(got) == {4: 0.25, 8: 0.3, 64: 0.27}
    check_png(plot_frame_scaling({"run": budget_curve(got)}, tmp_path / "s.png"))


def test_load_flat_and_bad_files(tmp_path):
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"overall": 0.3, "PR": None}), encoding="utf-8")
    assert load_accuracy_file(flat) == {"overall": 0.3, "PR": None}
    for name, text in (("list.json", "[1, 2]"), ("bad.json", "{nope"), ("shape.json", '{"a": {"b": 1}}'),
                       ("pct.json", '{"overall": {"accuracy": 26.2}}')):
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        with pytest.raises(DataError):
            load_accuracy_file(p)
    with pytest.raises(DataError, match="not found"):
        load_accuracy_file(tmp_path / "missing.json")
