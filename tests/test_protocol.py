"""The MedHorizon protocol on the synthetic benchmark: admission, prompts, probes."""

import numpy as np
import pytest

from medhorizon_tasks.benchmarks.medhorizon.protocol import INSTRUCTION, FrameSetting, build_prompt, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.medhorizon.scoring import score_item
from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.sampling import fps_candidates
from medhorizon_tasks.core.video.decode import decode_plan, index_video
from medhorizon_tasks.data.synthetic import probes


@pytest.fixture(scope="module")
def items(synthetic):
    return load_release(synthetic.data_path)


def _late_items(items):
    """Items of hour-long videos whose only evidence lies in the last tenth of the video."""
    out = []
    for it in items:
        if it.duration_s >= 3600 and all(s >= 0.9 * it.num_frames for s, _ in it.evidence_windows):
            out.append(it)
    return out


def test_prefix_truncation_misses_late_evidence_and_the_rule_finds_it(items, synthetic):
    late = _late_items(items)
    assert len(late) >= 2, "the synthetic benchmark places evidence in the last tenth of long videos"
    for it in late:
        path = synthetic.video_root / it.video_path
        meta = index_video(path).meta()
        prefix = fps_candidates(meta, 1.0)[:1248]  # what a prefix-truncating loader would keep
        in_window = lambda idx: any(s <= i <= e for i in idx for s, e in it.evidence_windows)  # noqa: E731
        assert not in_window(prefix)
        plan, frames = load_frames(it, FrameSetting(cap=1248), synthetic.video_root)
        assert in_window(plan.indices)
        assert score_item(it, probes.needle_answer(list(frames), build_prompt(it, plan)), "visual")["correct"]
        prefix_frames = decode_plan(path, type(plan)(tuple(int(i) for i in prefix), (), "prefix"))
        assert probes.needle_answer(list(prefix_frames), build_prompt(it, plan)) == probes.REFUSAL


def test_text_prompt_is_the_visual_prompt_without_frames(items, synthetic):
    it = items[0]
    plan, _ = load_frames(it, FrameSetting(), synthetic.video_root)
    visual, text = build_prompt(it, plan), build_prompt(it)
    assert visual.endswith(text)
    assert text.startswith("Question: ") and text.endswith(INSTRUCTION)
    assert "A. " in text and "D. " in text and "timestamps" not in text


def test_oracle_frames_are_evidence_frames(items, synthetic):
    for it in items[:10]:
        plan, frames = load_frames(it, FrameSetting(mode="oracle"), synthetic.video_root)
        assert all(any(s <= i <= e for s, e in it.evidence_windows) for i in plan.indices)
        assert score_item(it, probes.needle_answer(list(frames), build_prompt(it, plan)), "oracle")["correct"]


def test_needle_refuses_without_evidence_and_random_is_seeded(items):
    it = items[0]
    blank = [np.full((48, 64, 3), 128, np.uint8)] * 3
    assert probes.needle_answer(blank, build_prompt(it)) == probes.REFUSAL
    assert score_item(it, probes.REFUSAL, "text")["status"] == "refusal"
    prompt = build_prompt(it)
    assert probes.random_answer(prompt, 0) == probes.random_answer(prompt, 0)
    picks = {probes.random_answer(build_prompt(x), 0) for x in items}
    assert picks == {"A", "B", "C", "D"}


def test_video_path_escaping_the_root_is_an_item_error(items, synthetic, tmp_path):
    import dataclasses

    it = dataclasses.replace(items[0], video_path="../../etc/passwd")
    with pytest.raises(VideoError, match=f"item {it.uid}: .*video_path"):
        load_frames(it, FrameSetting(), synthetic.video_root)


def test_fixed_frame_budget_setting(items, synthetic):
    it = next(x for x in items if x.duration_s >= 3600)
    plan, frames = load_frames(it, FrameSetting(frames=16, max_side=32), synthetic.video_root)
    assert len(plan) == 16 and plan.indices[0] == 0 and plan.indices[-1] == it.num_frames - 1
    assert frames.shape == (16, 24, 32, 3)
