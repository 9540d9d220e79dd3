"""Frame order only (issue 27, item 3; MedHorizon Fig. 8, RQ3): the four order tasks share one prompt text and
one set of shown times, so the order of the frames is the only thing that differs between them."""

import yaml

from medhorizon_tasks.adapters.lmms_eval import medhorizon as lmms_medhorizon
from medhorizon_tasks.adapters.lmms_eval.bridges.frames import shown_times
from medhorizon_tasks.adapters.lmms_eval.runner import task_path
from medhorizon_tasks.adapters.vlmeval.frames import FrameStore
from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for
from medhorizon_tasks.benchmarks.medhorizon.diagnostics import ORDER_KINDS
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, build_prompt, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release


def _task_kwargs(task: str) -> dict:
    """The task YAML's own ``lmms_eval_specific_kwargs`` (what lmms-eval hands the hooks)."""
    doc = yaml.load((task_path() / f"{task}.yaml").read_text(), Loader=yaml.BaseLoader)
    return doc["lmms_eval_specific_kwargs"]["default"]


def test_the_four_order_tasks_prompt_texts_are_byte_identical(synthetic):
    items = load_release(synthetic.data_path)[:4]
    for item in items:
        doc = {**item.to_record(), "video_root": str(synthetic.video_root)}
        texts = {k: lmms_medhorizon.doc_to_text(doc, _task_kwargs(f"medhorizon_synthetic_order_{k}"))
                 for k in ORDER_KINDS}
        assert len({t.encode("utf-8") for t in texts.values()}) == 1, texts
        text = texts["original"]
        assert "chronological" not in text and "timestamps" not in text and "256 frames" in text
        # the orders do differ: the same frames, permuted
        plans = {k: load_frames(item, FrameSetting.from_kwargs(_task_kwargs(f"medhorizon_synthetic_order_{k}")),
                                synthetic.video_root)[0] for k in ORDER_KINDS}
        assert all(sorted(p.indices) == sorted(plans["original"].indices) for p in plans.values())
        assert len({p.indices for p in plans.values()}) == 4


def test_the_bridges_are_shown_the_same_times_for_every_order(synthetic):
    item = load_release(synthetic.data_path)[0]
    doc = {**item.to_record(), "video_root": str(synthetic.video_root)}
    shown = {}
    for k in ORDER_KINDS:
        frames = lmms_medhorizon.doc_to_visual(doc, _task_kwargs(f"medhorizon_synthetic_order_{k}"))
        assert not frames.chronological and len(frames) == 256
        shown[k] = tuple(round(t, 6) for t in shown_times(frames))
    assert len(set(shown.values())) == 1


def test_vlmevalkit_sends_the_same_text_for_every_order(synthetic, tmp_path):
    store = FrameStore(tmp_path)
    texts = set()
    for k in ORDER_KINDS:
        proto = protocol_for(PRESETS[f"MedHorizon_Synthetic_order_{k}"])
        text, files, error = proto.prompt(proto.units[0], store)
        assert error is None and len(files) == 256
        texts.add(text)
    assert len(texts) == 1


def test_outside_the_order_study_a_chronological_plan_keeps_its_times(synthetic):
    item = load_release(synthetic.data_path)[0]
    plan, _ = load_frames(item, FrameSetting(frames=16), synthetic.video_root)
    assert "in chronological order" in build_prompt(item, plan)
    assert "in chronological order" not in build_prompt(item, plan, times=False)
    assert FrameSetting.from_kwargs({"frames": 16, "order_study": "true"}).key() == FrameSetting(frames=16).key()
