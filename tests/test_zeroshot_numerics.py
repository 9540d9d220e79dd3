"""SurgHiBench zero-shot scores that cannot silently go wrong: Lorentz distances of unnormalised embeddings
(norms in the hundreds and beyond) exact and finite, a NaN / infinite score an error naming video, frame and
level, no NaN in any JSON file; a run whose frames all tie is refused, one where most do is warned about; the
docs' no-setup example (`surghi zeroshot --encoder synthetic_probe --out DIR`) a real run."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest

from medhorizon_tasks.benchmarks.surghi.zeroshot import lorentz_distance, lorentz_scores
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.safeio import WriteError, atomic_write_json, atomic_write_jsonl


def _strict(text: str):
    """JSON as every reader but Python's reads it: a bare NaN / Infinity is an error."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def _strict_lines(path) -> list:
    return [_strict(x) for x in path.read_text().splitlines()]


def _reference(x: np.ndarray, t: np.ndarray, c: float) -> np.ndarray:
    """-d_L of exp_o(x), exp_o(t) with 60 significant digits (Eq. 3-4 as written, nothing rearranged)."""
    mpmath.mp.dps = 60
    sc = mpmath.sqrt(mpmath.mpf(c))
    def point(v):
        v = [mpmath.mpf(float(e)) for e in v]
        n = mpmath.sqrt(sum(e * e for e in v))
        k = mpmath.sinh(sc * n) / (sc * n) if n else mpmath.mpf(1)
        space = [k * e for e in v]
        return mpmath.sqrt(1 / mpmath.mpf(c) + sum(e * e for e in space)), space
    out = np.empty((len(x), len(t)))
    for i, a in enumerate(x):
        x0, xs = point(a)
        for j, b in enumerate(t):
            y0, ys = point(b)
            inner = sum(p * q for p, q in zip(xs, ys)) - x0 * y0
            out[i, j] = float(-mpmath.acosh(max(-c * inner, mpmath.mpf(1))) / sc)
    return out


@pytest.mark.parametrize("norm", [1.0, 40.0, 300.0, 2000.0])
def test_lorentz_scores_of_large_embeddings_are_exact_and_finite(norm):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6))
    t = rng.standard_normal((5, 6))
    x *= norm / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.5, 1.5, (4, 1))
    t *= norm / np.linalg.norm(t, axis=1, keepdims=True) * rng.uniform(0.5, 1.5, (5, 1))
    t[0] = x[0]  # the same point: distance 0, not rounding noise times e^(2 |x|)
    t[1] = -x[1]  # opposite directions: one geodesic through the origin, d = |x| + |t|
    got = lorentz_scores(x, t, 0.815)
    assert np.isfinite(got).all()
    assert got[0, 0] == 0.0 and got[1, 1] == pytest.approx(-2 * np.linalg.norm(x[1]), rel=1e-12)
    assert got == pytest.approx(_reference(x, t, 0.815), rel=1e-9, abs=1e-9)
    # points given on the hyperboloid: the same distances from their space components
    on = lorentz_distance(np.zeros((1, 6)), t[:1] * 0 + np.eye(6)[:1] * math.sinh(3.0), 1.0)
    assert on[0, 0] == pytest.approx(3.0, abs=1e-12)


def test_no_nan_is_ever_written_to_a_json_file(tmp_path):
    with pytest.raises(WriteError, match="record 2 is not JSON"):
        atomic_write_jsonl(tmp_path / "a.jsonl", [{"x": 1.0}, {"x": float("nan")}])
    with pytest.raises(WriteError, match="is not JSON"):
        atomic_write_json(tmp_path / "b.json", {"score": float("inf")})
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "b.json").exists()


# ------------------------------------------------------------------ through the command

@pytest.fixture(scope="module")
def items(surghi_sample, tmp_path_factory):
    """Items of two videos of the sample, its hierarchies beside them."""
    folder = tmp_path_factory.mktemp("zs_numerics")
    rows = [json.loads(x) for x in surghi_sample.annotations_path.read_text().splitlines()]
    keep = [r for r in rows if r["video"] in ("synthtree_01", "synthdag_01")]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    (folder / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    return folder / "items.jsonl", surghi_sample.video_root


def _zeroshot(capsys, *args) -> tuple[int, str, str]:
    status = main(["surghi", "zeroshot", "--quiet", *args])
    got = capsys.readouterr()
    return status, got.out, got.err


def test_lorentz_with_embeddings_of_norm_in_the_hundreds_labels_every_frame(items, tmp_path, capsys):
    data, root = items
    status, out, err = _zeroshot(capsys, "--encoder", "tiny_encoders:FrameProjection", "--encoder-arg", "scale=300",
                                 "--similarity", "lorentz", "--curvature", "0.815", "--data", str(data),
                                 "--video-root", str(root), "--out", str(tmp_path / "o"), "--json")
    assert status == 0, err
    scores = _strict_lines(tmp_path / "o" / "scores.jsonl")
    assert len(scores) == 40
    for s in scores:
        for level in ("phases_top", "steps_top"):
            values = [v for _, v in s[level]]
            assert all(math.isfinite(v) for v in values) and values == sorted(values, reverse=True)
    _strict((tmp_path / "o" / "report.json").read_text())
    preds = _strict_lines(tmp_path / "o" / "predictions.jsonl")
    firsts = {"SynthTree": ("preparation", "trocar placement"), "SynthDAG": ("access", "inspection")}
    assert any((p["phase"], p["step"]) != firsts[p["dataset"]] for p in preds), "every frame got the first class"


def test_a_score_no_float_can_hold_is_an_error_naming_video_frame_and_level(items, tmp_path, capsys):
    data, root = items
    status, out, err = _zeroshot(capsys, "--encoder", "tiny_encoders:BrokenEncoder", "--encoder-arg", "fault=huge",
                                 "--data", str(data), "--video-root", str(root), "--out", str(tmp_path / "o"))
    assert status == 2 and "Traceback" not in err, err
    assert "SynthDAG video synthdag_01, frame 1: the phase scores of" in err
    assert "are NaN or infinite (lorentz similarity)" in err
    assert not (tmp_path / "o" / "scores.jsonl").exists()


def test_prompts_the_encoder_embeds_alike_are_refused_before_any_video(items, tmp_path, capsys):
    """The probe reads its own prompts and the sample's class names; a template that hides the names gives
    every prompt the zero vector, and every frame would get its dataset's first class."""
    data, root = items
    status, out, err = _zeroshot(capsys, "--encoder", "synthetic_probe", "--label-template", "a frame of {label}",
                                 "--data", str(data), "--video-root", str(root), "--out", str(tmp_path / "o"))
    assert status == 2 and "Traceback" not in err, err
    assert "encode_text gives every phase prompt of SynthDAG the same embedding (all zero" in err
    assert "every frame would tie on every phase class" in err


def test_a_run_where_every_frame_ties_is_an_error(items, tmp_path, capsys):
    data, root = items
    status, out, err = _zeroshot(capsys, "--encoder", "tiny_encoders:BrokenEncoder", "--encoder-arg", "fault=blank",
                                 "--data", str(data), "--video-root", str(root), "--out", str(tmp_path / "o"))
    assert status == 2 and "Traceback" not in err, err
    assert "every one of the 40 frames scored ties on every phase class" in err
    assert not (tmp_path / "o" / "predictions.jsonl").exists()


def test_a_run_where_most_frames_tie_is_warned_with_the_share(surghi_sample, tmp_path, capsys):
    """The sample's uncoded segment embeds to the zero vector in the probe: items there (one clip frame each)
    tie on every class; one coded frame beside them does not."""
    manifest = json.loads(surghi_sample.manifest_path.read_text())
    rows = [json.loads(x) for x in surghi_sample.annotations_path.read_text().splitlines()]
    segs = {v["video"]: v["segments"] for v in manifest["videos"]}

    def coded(r):
        return next(s for s in segs[r["video"]] if s["start"] <= r["frame"] < s["end"])["coded"]
    blank = [r for r in rows if not coded(r)]
    keep = blank + [next(r for r in rows if coded(r) and r["video"] == blank[0]["video"])]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in keep))
    (tmp_path / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    status, out, err = _zeroshot(capsys, "--encoder", "synthetic_probe", "--frames", "1", "--data", str(data),
                                 "--video-root", str(surghi_sample.video_root), "--out", str(tmp_path / "o"))
    assert status == 0, err
    n = len(keep)
    share = round(100 * (n - 1) / n)
    assert (f"warning: {n - 1} of {n} frames ({share}%) tie on every phase class: their phase label is the first "
            "class listed, not a prediction") in out
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert rep["zeroshot"]["ties"]["phases"] == {"frames": n, "tied": n - 1, "share": pytest.approx((n - 1) / n)}


def test_the_docs_no_setup_example_is_a_real_run(surghi_sample, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(surghi_sample.root.parent))
    doc = (__import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "surghibench.md").read_text()
    assert "$ medhorizon-tasks surghi zeroshot --encoder synthetic_probe --out runs/zs-sample\n" in doc
    status, out, err = _zeroshot(capsys, "--encoder", "synthetic_probe", "--out", str(tmp_path / "zs"), "--json")
    assert status == 0, err
    rep = json.loads(out)
    assert rep["overall"]["multi_level"] > 0.5
    assert rep["zeroshot"]["ties"]["phases"]["share"] < 0.2 and rep["zeroshot"]["ties"]["steps"]["share"] < 0.2
    preds = _strict_lines(tmp_path / "zs" / "predictions.jsonl")
    assert len({p["phase"] for p in preds if p["dataset"] == "SynthDAG"}) == 4
