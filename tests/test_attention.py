"""The attention-drift diagnostic (MedHorizon Fig. 9): the framework-free metrics against hand computations,
and the query-row hook on tiny random Qwen2.5-VL / Qwen3-VL (tests/tiny_vlm.py) against the attention
weights the same layers return with ``output_attentions=True`` (eager)."""

import math

import numpy as np
import pytest
import torch
from PIL import Image

import tiny_vlm
from medhorizon_tasks.benchmarks.medhorizon import attention as M
from medhorizon_tasks.core.stats import mean_ci
from medhorizon_tasks.core.video.planned_frames import PlannedFrames

# --------------------------------------------------------------------------- metrics


@pytest.mark.parametrize("n", [1, 7, 64])
def test_attention_on_one_unit_needs_one_unit_for_every_share(n):
    scores = np.zeros(n)
    scores[n // 2] = 3.0
    for p in (50, 80, 90):
        assert M.units_for_share(scores, p / 100) == pytest.approx(1 / n)
    curve = M.ranked_curve(scores, points=n + 1)   # read at 0, 1/n, 2/n ... of the units
    assert curve[0] == 0.0 and curve[1:] == pytest.approx([1.0] * n)


def test_uniform_attention_needs_that_share_of_units():
    scores = np.ones(64)
    assert M.units_for_share(scores, 0.9) == math.ceil(0.9 * 64) / 64
    assert M.units_for_share(scores, 0.5) == 0.5
    curve = M.ranked_curve(scores)
    assert curve == pytest.approx(np.linspace(0, 1, M.CURVE_POINTS).tolist())


def test_share_counts_units_by_rank_not_position():
    # 60%, 25%, 10%, 5% placed out of order: 50% needs 1 unit, 80% two, 90% three
    scores = [0.05, 0.25, 0.6, 0.1]
    assert [M.units_for_share(scores, p) for p in (0.5, 0.8, 0.9)] == [0.25, 0.5, 0.75]
    assert M.ranked_curve(scores, points=5) == pytest.approx([0.0, 0.6, 0.85, 0.95, 1.0])


def test_edge_shares_weigh_straddling_units():
    assert M.edge_shares(np.ones(64)) == pytest.approx((0.1, 0.1))
    # 4 units: the first tenth is 40% of unit 0, the last tenth 40% of unit 3
    assert M.edge_shares([0.5, 0.2, 0.2, 0.1]) == pytest.approx((0.4 * 0.5, 0.4 * 0.1))


def test_evidence_mass_counts_each_frame_of_a_unit():
    times = [[0.0, 1.0], [2.0, 3.0], [4.0, 4.0]]
    scores = [0.2, 0.5, 0.3]
    # window 1..2 s holds frame 1.0 of unit 0 and frame 2.0 of unit 1: half of each
    assert M.evidence_mass(scores, times, [(1.0, 2.0)]) == pytest.approx(0.5 * 0.2 + 0.5 * 0.5)
    assert M.evidence_mass(scores, times, [(3.5, 9.0)]) == pytest.approx(0.3)
    assert M.evidence_mass(scores, times, []) is None


def test_mean_pairwise_cosine_by_hand():
    f = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    pairs = [0.0, 1 / math.sqrt(2), 1 / math.sqrt(2)]
    assert M.mean_pairwise_cosine(f) == pytest.approx(np.mean(pairs))
    assert M.mean_pairwise_cosine(f[:1]) is None


def test_patch_redundancy_compares_with_the_nearest_preceding_keyframe():
    rng = np.random.default_rng(0)
    f = rng.normal(size=(6, 4, 8))
    keys = [1, 4]
    out = M.patch_redundancy(f, keys, patch_scores=rng.random((6, 4)))

    def cos(a, b):
        return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)

    expected = np.concatenate([cos(f[2], f[1]), cos(f[3], f[1]), cos(f[5], f[4])])  # unit 0: no keyframe before
    assert out["compared_units"] == 3
    assert out["patch_similarity"] == pytest.approx(expected.mean())
    # identical patches are fully redundant
    same = np.repeat(f[:1], 6, axis=0)
    assert M.patch_redundancy(same, [0])["patch_similarity"] == pytest.approx(1.0)


def test_top_attention_patches_are_the_top_tenth_by_attention():
    f = np.zeros((2, 10, 2))
    f[0, :, 0] = 1.0
    f[1, :, 0] = 1.0
    f[1, 0] = [0.0, 1.0]  # patch 0 of unit 1 is orthogonal to the keyframe's patch 0
    scores = np.ones((2, 10))
    scores[1, 0] = 5.0
    out = M.patch_redundancy(f, [0], scores)
    assert out["patch_similarity_top_attention"] == pytest.approx(0.0)
    assert out["patch_similarity"] == pytest.approx(0.9)


def test_keyframes_are_a_quarter_of_the_frames_in_units():
    assert M.keyframe_count(64, 2, 128) == 16      # the paper's 32 of 128 frames, two frames a unit
    assert M.keyframe_count(128, 1) == 32
    assert M.keyframe_units([0.1, 0.4, 0.4, 0.1], 2) == [1, 2]


def test_summary_means_and_intervals_per_model_family_task():
    recs = [{"model": "m", "task": t, "family": "fine_grained", "units_for_90": v, "curve": [0, v, 1]}
            for t, v in (("PR", 0.5), ("PR", 0.7), ("SD", 0.9))]
    rows = {(r["level"], r["group"]): r for r in M.summarise(recs)}
    assert rows[("overall", "overall")]["n"] == 3
    assert rows[("overall", "overall")]["units_for_90"] == pytest.approx(0.7)
    assert rows[("overall", "overall")]["units_for_90_ci95"] == list(mean_ci([0.5, 0.7, 0.9]))
    assert rows[("task", "PR")]["units_for_90"] == pytest.approx(0.6)
    assert rows[("task", "SD")]["units_for_90_ci95"] == [0.9, 0.9]
    assert rows[("family", "fine_grained")]["curve"] == pytest.approx([0, 0.7, 1])
    assert rows[("overall", "overall")]["evidence_mass"] is None


def test_mean_ci_is_scipys_percentile_bootstrap():
    from scipy.stats import bootstrap

    x = np.array([0.1, 0.5, 0.2, 0.9, 0.4, 0.3])
    ref = bootstrap((x,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(0))
    assert mean_ci(x) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert mean_ci([]) is None
    assert mean_ci([0.3]) == (0.3, 0.3)


def test_published_fig9_values_are_the_texts():
    rows = M.published_fig9()["rows"]
    assert {(r["model"], r["metric"]): r["value"] for r in rows} == {
        ("Qwen3-VL-8B", "units_for_90"): 0.767, ("Lingshu-7B", "units_for_90"): 0.856,
        ("Qwen3-VL-8B", "frame_similarity"): 0.90, ("Lingshu-7B", "frame_similarity"): 0.90}


# --------------------------------------------------------------------------- the hook on tiny models

BUDGET = {"frame_min_pixels": 3136, "frame_max_pixels": 50176}


@pytest.fixture(scope="module")
def bridges(tmp_path_factory):
    from medhorizon_tasks.adapters.lmms_eval.bridges.qwen import Qwen2_5_VL, Qwen3_VL

    root = tmp_path_factory.mktemp("tiny")
    torch.manual_seed(0)
    q25 = tiny_vlm.build_qwen2_5_vl(root / "q25")
    q3 = tiny_vlm.build_qwen3_vl(root / "q3")
    made = {}
    for name, cls, path in (("qwen2_5", Qwen2_5_VL, q25), ("qwen3", Qwen3_VL, q3)):
        for impl in ("sdpa", "eager"):
            made[name, impl] = cls(pretrained=str(path), device="cpu", device_map="cpu", attn_implementation=impl,
                                   **BUDGET)
            made[name, impl].model.float()  # the wrapper loads bfloat16; 1e-5 is a float32 comparison
    return made


def _frames(n: int, seed: int = 0, changed: int | None = None) -> PlannedFrames:
    """n frames that all differ (random noise), at 0, 2, 4 ... s; ``changed``: that frame redrawn."""
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(0, 255, (56, 84, 3), dtype=np.uint8) for _ in range(n)]
    if changed is not None:
        arrays[changed] = np.random.default_rng(seed + 100).integers(0, 255, (56, 84, 3), dtype=np.uint8)
    return PlannedFrames([Image.fromarray(a) for a in arrays], timestamps=[2.0 * i for i in range(n)])


PROMPT = ("These are 6 frames from a 0:00:12 clinical video. Frame timestamps in seconds: 0.0, 2.0, 4.0.\n\n"
          "Question: Which finding is shown?\nOptions:\nA. polyp\nB. ulcer\nC. bleeding\nD. none\n"
          "Answer with only the letter (A, B, C, or D) of the correct option.")


def _rows_and_layers(bridge, prompt=PROMPT):
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import query_rows

    inputs = bridge.video_inputs(prompt, _frames(6))
    cfg = bridge.model.config
    marker = bridge.processor.tokenizer.encode(M.QUERY_START, add_special_tokens=False)
    return inputs, query_rows(inputs["input_ids"], cfg.video_token_id, cfg.vision_end_token_id, marker)


@pytest.mark.parametrize("name", ["qwen2_5", "qwen3"])
@pytest.mark.parametrize("impl", ["sdpa", "eager"])
def test_hook_rows_equal_the_eager_attention_weights(bridges, name, impl):
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import QueryRowAttention

    eager = bridges[name, "eager"]
    inputs, rows = _rows_and_layers(eager)
    with torch.no_grad():
        weights = eager.model(**inputs, output_attentions=True, use_cache=False).attentions
    model = bridges[name, impl].model
    n_layers = len(weights)
    with torch.no_grad(), QueryRowAttention(model, list(range(n_layers)), rows, keep_rows=True) as rec:
        model(**inputs, use_cache=False)
    for layer in range(n_layers):
        expected = weights[layer][0][:, rows, :].mean(0)  # (R, L), heads averaged
        got = rec.rows_attention[layer]
        assert got.shape == expected.shape
        assert torch.allclose(got, expected, atol=1e-5, rtol=0), (layer, (got - expected).abs().max())
    # the pass leaves the model and transformers' registries as they were
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    assert model.config.text_config._attn_implementation == impl
    assert not [k for k in list(ALL_ATTENTION_FUNCTIONS.keys()) + list(ALL_MASK_ATTENTION_FUNCTIONS.keys())
                if k.startswith("medhorizon")]


@pytest.mark.parametrize("name", ["qwen2_5", "qwen3"])
def test_rows_are_the_question_after_the_video(bridges, name):
    bridge = bridges[name, "sdpa"]
    inputs, rows = _rows_and_layers(bridge)
    text = bridge.processor.tokenizer.decode(inputs["input_ids"][0][rows])
    assert text.startswith("Question: Which finding is shown?") and "timestamps" not in text
    assert rows[-1] == inputs["input_ids"].shape[1] - 1   # the last prompt token is a query row
    assert "<|video_pad|>" not in text
    # a prompt without the marker: every token after the video
    inputs, rows = _rows_and_layers(bridge, "Which finding is shown?")
    assert bridge.processor.tokenizer.decode(inputs["input_ids"][0][rows]).startswith("Which finding")


def test_the_query_marker_opens_the_protocols_question():
    from medhorizon_tasks.benchmarks.medhorizon.protocol import build_prompt
    from medhorizon_tasks.benchmarks.medhorizon.release import Item

    item = Item("u", "v", "s", "o", "exam", "v.mp4", 10, 1.0, 10.0, "Where?", ("a", "b", "c", "d"), "A", "PR",
                "Procedure", "fine_grained", 0, "", ())
    prompt = build_prompt(item)
    assert prompt.startswith(M.QUERY_START + " Where?") and prompt.count(M.QUERY_START) == 1


@pytest.mark.parametrize("name", ["qwen2_5", "qwen3"])
@pytest.mark.parametrize("n", [5, 6])
def test_each_frame_lands_in_its_temporal_unit(bridges, name, n):
    """Redraw one frame: exactly the visual tokens of the unit that holds it change (the vision tower
    attends within a temporal patch), so the mapping is checked against the model, not against itself."""
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import attention_pass, unit_frames

    bridge = bridges[name, "sdpa"]
    cfg, vp = bridge.model.config, bridge.processor.video_processor

    def measure(frames):
        inputs = bridge.video_inputs(PROMPT, frames)
        return attention_pass(bridge.model, inputs, video_token_id=cfg.video_token_id, merge_size=vp.merge_size,
                              vision_end_token_id=cfg.vision_end_token_id)

    base = measure(_frames(n))
    units = math.ceil(n / 2)
    assert len(base.unit_scores) == units
    assert unit_frames(n, units, vp.temporal_patch_size)[-1] == ([n - 2, n - 1] if n % 2 == 0 else [n - 1])
    for frame in (1, n - 1):
        other = measure(_frames(n, changed=frame))
        changed = [u for u in range(units) if not np.allclose(base.unit_features[u], other.unit_features[u])]
        assert changed == [frame // 2], (frame, changed)


def test_qwen3_timestamp_tokens_are_not_visual(bridges):
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import visual_units

    bridge = bridges["qwen3", "sdpa"]
    frames = _frames(5)
    inputs = bridge.video_inputs(PROMPT, frames)
    cfg, tok = bridge.model.config, bridge.processor.tokenizer
    ids = inputs["input_ids"][0]
    units = visual_units(ids, inputs["video_grid_thw"], cfg.video_token_id, bridge.processor.video_processor.merge_size)
    assert len(units) == 3
    for k, unit in enumerate(units):
        assert (ids[unit] == cfg.video_token_id).all() and np.all(np.diff(unit) == 1)
        # the label before each unit is the mean of its frames' times (the last unit: frame 4 twice)
        label = tok.decode(ids[(units[k - 1][-1] + 1 if k else unit[0] - 30):unit[0]])
        t = np.mean([frames.timestamps[min(i, 4)] for i in (2 * k, 2 * k + 1)])
        assert f"<{t:.1f} seconds>" in label
    between = ids[units[0][-1] + 1:units[1][0]]
    assert (between != cfg.video_token_id).all() and len(between) > 2


def test_scored_answers_are_the_same_with_and_without_the_diagnostic(bridges):
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import measure_frames

    bridge = bridges["qwen3", "sdpa"]
    frames = _frames(6)
    gen = {"max_new_tokens": 6, "until": ["<|im_end|>"]}
    before = bridge.generate_from_frames(PROMPT, frames, dict(gen))
    logits = bridge.model(**bridge.video_inputs(PROMPT, frames)).logits[0, -1]
    record = measure_frames(bridge, PROMPT, frames, layers="0,-1", windows=[(2.0, 4.0)])
    after = bridge.generate_from_frames(PROMPT, frames, dict(gen))
    assert before == after and before != ""
    assert torch.equal(logits, bridge.model(**bridge.video_inputs(PROMPT, frames)).logits[0, -1])
    assert record["layers"] == [0, 1] and record["units"] == 3 and record["unit_frames"] == [[0, 1], [2, 3], [4, 5]]
    assert sum(record["unit_scores"]) == pytest.approx(1.0)
    # frames at 2 and 4 s: frame 1 of unit 0 and frame 2 of unit 1
    s = record["unit_scores"]
    assert record["evidence_mass"] == pytest.approx(0.5 * s[0] + 0.5 * s[1])


def test_layers_resolve_and_refuse_out_of_range():
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import resolve_layers

    assert resolve_layers("all", 4) == [0, 1, 2, 3]
    assert resolve_layers("last", 4) == [3]
    assert resolve_layers("0;-1", 4) == [0, 3]
    with pytest.raises(ValueError, match="layer 4 is out of range"):
        resolve_layers("4", 4)


@pytest.mark.parametrize("name", ["qwen2_5", "qwen3"])
def test_attention_forced_onto_one_unit_needs_one_unit_of_n(bridges, name):
    """Constructed through the real pass: every visual token but those of unit 2 is masked out of the
    prompt's attention mask, so all visual attention of the query rows lands on that unit."""
    from medhorizon_tasks.adapters.lmms_eval.bridges.attention import attention_pass, visual_units

    bridge = bridges[name, "sdpa"]
    cfg, vp = bridge.model.config, bridge.processor.video_processor
    inputs = bridge.video_inputs(PROMPT, _frames(10))
    units = visual_units(inputs["input_ids"], inputs["video_grid_thw"], cfg.video_token_id, vp.merge_size)
    # the M-RoPE positions of the unmasked prompt (Qwen derives them from the mask when it has none)
    seen = {}

    def grab(_module, _args, kwargs):
        seen["position_ids"] = kwargs["position_ids"]

    hook = bridge.model.model.language_model.register_forward_pre_hook(grab, with_kwargs=True)
    with torch.no_grad():
        bridge.model(**inputs, use_cache=False)
    hook.remove()
    inputs["position_ids"] = seen["position_ids"]
    for k, unit in enumerate(units):
        if k != 2:
            inputs["attention_mask"][0, unit] = 0
    measured = attention_pass(bridge.model, inputs, video_token_id=cfg.video_token_id, merge_size=vp.merge_size,
                              vision_end_token_id=cfg.vision_end_token_id)
    n = len(units)
    assert n == 5
    metrics = M.item_metrics(measured.unit_scores, unit_times=[[0.0]] * n)
    assert metrics["unit_scores"][2] == pytest.approx(1.0)
    assert metrics["units_for_90"] == pytest.approx(1 / n) and metrics["units_for_50"] == pytest.approx(1 / n)


@pytest.mark.parametrize("argv, message", [
    (["--model", "medhorizon_internvl3"], "locates the visual tokens of medhorizon_qwen2_5_vl and medhorizon_qwen3_vl"),
    (["--model", "medhorizon_qwen3_vl", "--layers", "first"], "--layers 'first': expected all, last"),
])
def test_the_command_refuses_what_it_cannot_measure_before_running(argv, message, capsys):
    from medhorizon_tasks.commands.main import main

    assert main(["diagnose", "attention", *argv, "--synthetic", "--out", "unused"]) == 2
    assert message in capsys.readouterr().err
