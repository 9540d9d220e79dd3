"""What every selector owes the run: a valid selection for every budget and video length (a property test), the
plug-in contract checked before anything is written, WFS-SB's relevance as released (raw probabilities; min-max
only for a scorer whose output is not one), and ViLAMP's 600-candidate cap."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medhorizon_tasks.core.sampling import Uniform, VideoMeta, fps_candidates, plan_frames
from medhorizon_tasks.core.selectors import (
    BUILTIN,
    PROBABILITY,
    VILAMP_MAX_CANDIDATES,
    Aks,
    KeyframeNms,
    Selection,
    SelectorError,
    Wfs,
    check_selection,
    load_selector,
    plan_selection,
    relevance_for,
)

# ------------------------------------------------------------------ every selector, every budget, every length

SHAPES = ("constant", "zeros", "ramp", "spike", "step", "noise", "two_peaks", "negative_cosines")


def _curve(shape: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    if shape == "constant":
        return np.full(n, 0.37)
    if shape == "zeros":
        return np.zeros(n)
    if shape == "ramp":
        return t / max(n - 1, 1)
    if shape == "spike":
        s = np.zeros(n)
        s[rng.integers(n)] = 1.0
        return s
    if shape == "step":
        return (t >= n // 2).astype(np.float64) * 0.9 + 0.05
    if shape == "noise":
        return rng.random(n)
    if shape == "two_peaks":
        return np.exp(-((t - n / 4) ** 2) / 8) + np.exp(-((t - 3 * n / 4) ** 2) / 8)
    return rng.uniform(-0.3, 0.35, n)  # a dual encoder's raw cosines, some negative


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(BUILTIN)), budget=st.integers(1, 40),
       seconds=st.one_of(st.integers(1, 12), st.integers(13, 400)), shape=st.sampled_from(SHAPES),
       seed=st.integers(0, 2**16), with_embeddings=st.booleans(), scale=st.sampled_from([PROBABILITY, "cosine"]))
def test_every_selector_gives_a_valid_selection_for_every_budget_length_and_relevance_shape(
        name, budget, seconds, shape, seed, with_embeddings, scale):
    meta = VideoMeta(num_frames=seconds * 5, fps=5.0)  # `seconds` candidates at 1 FPS, from one up
    n = len(fps_candidates(meta, 1.0))
    assert n == seconds
    scores = _curve(shape, n, seed)
    emb = np.random.default_rng(seed + 1).normal(size=(n, 6)) if with_embeddings else None
    plan = plan_selection(meta, load_selector(name, budget), scores, emb, video="v", scale=scale)
    idx = list(plan.indices)
    assert 1 <= len(idx) <= budget
    assert idx == sorted(set(idx)) and 0 <= idx[0] and idx[-1] < meta.num_frames
    assert len(plan.timestamps) == len(idx)


@pytest.mark.parametrize("scores", [np.full(50, 0.4), np.full(1, 0.4), np.zeros(7)], ids=["flat", "one", "zeros"])
def test_wfs_at_a_budget_of_one_without_boundaries_takes_the_most_relevant_frame(scores):
    # the release: floor(1 / 2) = 0 frames uniformly, 1 by relevance (here: equal relevance -> the earliest)
    got = Wfs(1).select(scores)
    assert got.positions.tolist() == [0] and got.note == "no_boundaries"
    s = np.full(50, 0.2)
    s[31] = 0.9  # one spike: its detail band may find boundaries; either way exactly one frame
    assert len(Wfs(1).select(s).positions) == 1


def test_wfs_no_boundary_uniform_half_is_the_floor_of_an_even_spacing():
    # 10 flat frames, budget 6: floor(linspace(0, 9, 3)) = 0, 4, 9 (rounding would give 5), then 1, 2, 3
    got = Wfs(6).select(np.full(10, 0.5))
    assert got.positions.tolist() == [0, 1, 2, 3, 4, 9]


# ------------------------------------------------------------------ the plug-in contract

class _Plugin:
    name, version, uses_embeddings = "mine", "0.1", False

    def __init__(self, budget, answer):
        self.budget, self.answer = budget, answer

    def describe(self):
        return f"mine(budget={self.budget})"

    def select(self, scores, embeddings=None):
        return self.answer(len(scores))


@pytest.mark.parametrize("answer, what", [
    (lambda n: Selection(np.arange(n)), "selected 20 frames for a budget of 8"),
    (lambda n: Selection(np.zeros(0, dtype=np.int64)), "selected no frame"),
    (lambda n: Selection(np.array([1, 3, 3])), "position(s) 3 selected more than once"),
    (lambda n: Selection(np.array([2, 20])), "position(s) 20 are outside 0..19"),
    (lambda n: Selection(np.array([-1, 2])), "position(s) -1 are outside 0..19"),
    (lambda n: Selection(np.array([5, 2])), "not in increasing (time) order"),
    (lambda n: Selection(np.array([1.5, 2.0])), "of type float64, not whole numbers"),
    (lambda n: Selection(np.array([[1, 2]])), "shape (1, 2)"),
    (lambda n: [1, 2, 3], "returned list, not a Selection"),
    (lambda n: None, "returned NoneType, not a Selection"),
    (lambda n: 1 / 0, "failed: ZeroDivisionError"),
], ids=["long", "empty", "dup", "range", "negative", "order", "float", "2d", "list", "none", "raises"])
def test_a_plugins_bad_answer_is_one_message_naming_the_selector_the_video_and_the_fault(answer, what):
    meta = VideoMeta(num_frames=200, fps=10.0)  # 20 candidates
    with pytest.raises(SelectorError) as err:
        plan_selection(meta, _Plugin(8, answer), np.zeros(20), video="vid-07")
    text = str(err.value)
    assert "\n" not in text and what in text, text
    assert text.startswith("selector mine(budget=8)@0.1 on video vid-07 (20 candidate frames)")


def test_a_plugins_good_answers_pass_unchanged():
    meta = VideoMeta(num_frames=200, fps=10.0)
    for answer in (lambda n: Selection([2, 5, 19]), lambda n: Selection(np.array([4], dtype=np.int32)),
                   lambda n: Selection(None)):
        plan = plan_selection(meta, _Plugin(8, answer), np.zeros(20), video="v")
        assert 1 <= len(plan.indices) <= 8
    assert check_selection(Selection([0, 1]), _Plugin(2, None), 2).positions.dtype == np.int64


def _register(folder: Path, code: str) -> dict:
    """A plug-in selector ``bad`` registered by entry point in ``folder`` (on PYTHONPATH for a subprocess)."""
    (folder / "bad_selectors.py").write_text(code)
    dist = folder / "bad_selectors-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-selectors\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[medhorizon_tasks.frame_selectors]\nbad = bad_selectors:Bad\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
            "CUDA_VISIBLE_DEVICES": ""}


def test_select_refuses_a_plugin_that_ignores_the_budget_before_writing_anything(synthetic, tmp_path):
    """The issue's case: a plug-in giving every candidate for --budget 8 was accepted, its recall set beside uniform's."""
    env = _register(tmp_path, "import numpy as np\nfrom medhorizon_tasks.core.selectors import Selection\n\n"
                              "class Bad:\n    name, version, uses_embeddings = 'bad', '1', False\n\n"
                              "    def __init__(self, budget):\n        self.budget = budget\n\n"
                              "    def describe(self):\n        return f'bad(budget={self.budget})'\n\n"
                              "    def select(self, scores, embeddings=None):\n"
                              "        return Selection(np.arange(len(scores)))\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", "select", "--synthetic",
                           "--selector", "bad", "--scorer", "synthetic_probe", "--budget", "8", "--recall", "--quiet",
                           "--out", str(out)], env={**env, "MEDHORIZON_SYNTHETIC_DIR": str(synthetic.root)},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    message = proc.stderr.strip().splitlines()[-1]
    assert "selector bad(budget=8)@1 on video " in message and "frames for a budget of 8" in message, message
    assert not list(out.glob("selection-*.jsonl")) and not (out / "select.json").exists()


# ------------------------------------------------------------------ WFS-SB's relevance, both scales

def test_only_wfs_given_a_non_probability_scorer_is_normalised():
    cos = np.array([0.21, 0.25, 0.29])
    for sel, scale, mode in ((Wfs(2), PROBABILITY, "raw"), (Wfs(2), "cosine", "minmax"),
                             (Wfs(2), "unspecified", "minmax"), (Aks(2), "cosine", "raw"),
                             (KeyframeNms(2), "cosine", "raw"), (load_selector("uniform", 2), "cosine", "raw")):
        got, how = relevance_for(sel, cos, scale)
        assert how == mode, (sel, scale)
        assert np.allclose(got, [0.0, 0.5, 1.0] if mode == "minmax" else cos)


def test_wfs_weighs_raw_probabilities_as_released():
    """Two clips of 100 frames, probabilities 0.30 then 0.32: raw, their importances (0.4 duration + 0.2 mean +
    0.3 max + 0.1 variance share) are 0.2 + 0.06 + 0.09 = 0.35 and 0.2 + 0.064 + 0.096 = 0.36, so softmax splits 10
    frames 5.02 / 4.98... -> 5 / 5; min-max normalised (0 then 1) they are 0.2 and 0.7, shares 1 / (1 + e^0.5) =
    0.378 and 0.622 -> 3.78 / 6.22 -> 4 / 6 (the largest remainder). The released code feeds the raw probabilities."""
    s = np.where(np.arange(200) < 100, 0.30, 0.32)
    sel = Wfs(10)
    raw = np.array([sel.importance(s, 0, 100), sel.importance(s, 100, 200)])
    assert raw == pytest.approx([0.35, 0.36])
    norm, how = relevance_for(sel, s, "cosine")
    assert how == "minmax" and norm.tolist() == [0.0] * 100 + [1.0] * 100
    scaled = np.array([sel.importance(norm, 0, 100), sel.importance(norm, 100, 200)])
    assert scaled == pytest.approx([0.2, 0.7])
    assert sel.allocate(raw).tolist() == [5, 5] and sel.allocate(scaled).tolist() == [4, 6]
    # through the planner: a probability scorer's curve goes in raw, a cosine scorer's min-max normalised, and the
    # two selections differ (the MMR's relevance term, 2 rel - 1, weighs against similarity on another scale)
    meta = VideoMeta(num_frames=200, fps=1.0)
    as_probability = plan_selection(meta, sel, s, scale=PROBABILITY)
    as_cosine = plan_selection(meta, sel, s, scale="cosine")
    assert list(as_probability.indices) == sel.select(s).positions.tolist()
    assert list(as_cosine.indices) == sel.select(norm).positions.tolist()
    assert as_probability.indices != as_cosine.indices


# ------------------------------------------------------------------ ViLAMP's candidate cap

def test_vilamp_caps_the_candidates_at_600_spread_uniformly_as_its_evaluation():
    assert VILAMP_MAX_CANDIDATES == 600 and KeyframeNms(8).max_candidates == 600
    n = 1800
    kept = KeyframeNms(8).capped(n)
    assert len(kept) == 600 and kept[0] == 0 and kept[-1] == n - 1
    assert kept.tolist() == [math.floor(i * (n - 1) / 599) for i in range(600)]  # floor of linspace, as exp_vMME.py
    s = np.zeros(n)
    s[1] = 0.9  # the most relevant frame is not among the 600 kept (0, 3, 6, ...): ViLAMP never sees it
    assert 1 not in kept.tolist()
    capped = KeyframeNms(8).select(s)
    assert 1 not in capped.positions.tolist() and set(capped.positions.tolist()) <= set(kept.tolist())
    assert capped.note == "candidate_cap,no_keyframe"
    uncapped = KeyframeNms(8, max_candidates=None).select(s)
    assert 1 in uncapped.positions.tolist() and uncapped.note == ""
    assert KeyframeNms(8).capped(600) is None  # 600 or fewer: all of them
    assert load_selector("vilamp", 8, {"max_candidates": 1000}).capped(n).tolist() == \
        np.floor(np.linspace(0, n - 1, 1000)).astype(int).tolist()
    with pytest.raises(Exception, match="max_candidates must be a whole number >= 1"):
        load_selector("vilamp", 8, {"max_candidates": 0})


def test_uniform_select_is_the_frames_tasks_plan():
    meta = VideoMeta(num_frames=12345, fps=29.97)
    n = len(fps_candidates(meta, 1.0))
    for budget in (1, 4, 64, 1000):
        plan = plan_selection(meta, load_selector("uniform", budget), np.zeros(n))
        assert plan.indices == plan_frames(meta, Uniform(budget)).indices
        assert json.dumps(plan.indices)  # plain ints
