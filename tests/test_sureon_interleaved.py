"""Sureon's prompt, interleaved (issue 27, item 4; appendix D.1, Fig. 17: "Frames are interleaved with their
timestamps, followed by the question and seven answer options"): the clip's range, then each frame immediately
after its own timestamp, then the question and options -- in lmms-eval (chat messages, the bridges) and in
VLMEvalKit (``build_prompt``'s message list), from one rule (``benchmarks.sureon.protocol.prompt_parts``)."""

import re

import numpy as np
import pytest
from PIL import Image

from medhorizon_tasks.adapters.lmms_eval import sureon as lmms_sureon
from medhorizon_tasks.adapters.vlmeval.frames import FrameStore
from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for
from medhorizon_tasks.benchmarks.sureon.protocol import build_prompt, prompt_parts
from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.core.video.planned_frames import PlannedFrames

STAMP = re.compile(r"^Frame (\d+) at (\d+\.\d) s:$")
NOBLUR = {"mode": "visual", "blur": False}


def _assert_alternates(kinds_and_values, times):
    """``[("text", range), ("text", stamp 1), ("image", x), ..., ("text", question)]`` with stamp k naming the
    k-th frame's time."""
    kinds = [k for k, _ in kinds_and_values]
    n = len(times)
    assert kinds == ["text", *(["text", "image"] * n), "text"], kinds
    assert kinds_and_values[0][1].startswith("This is a clip from ")
    assert kinds_and_values[-1][1].startswith("\nQuestion: ")  # after a blank line
    for k in range(n):
        stamp = kinds_and_values[1 + 2 * k][1]
        m = STAMP.match(stamp)
        assert m and int(m.group(1)) == k + 1 and m.group(2) == f"{times[k]:.1f}", stamp


@pytest.fixture(scope="module")
def sureon_proto():
    return protocol_for(PRESETS["Sureon_Synthetic_visual_noblur"])


def test_the_rule_places_each_frame_right_after_its_timestamp(sureon_proto):
    item = sureon_proto.units[0]
    plan = FramePlan((10, 20, 30, 40), (12.0, 12.4, 12.8, 13.2), "clip")
    parts = prompt_parts(item, plan)
    _assert_alternates([("image", p) if isinstance(p, int) else ("text", p) for p in parts], plan.timestamps)
    assert [p for p in parts if isinstance(p, int)] == [0, 1, 2, 3]
    # the blind prompt is unchanged: the clip's range, a blank line, the question and options
    blind = build_prompt(item)
    assert blind == "\n".join([parts[0], "", parts[-1].lstrip("\n")])
    assert "Frame" not in blind and "frames" not in blind
    # one text for the consumers that put every image first: the same parts, joined; minus its frame lines: blind
    flat = build_prompt(item, plan)
    assert flat == "\n".join(p for p in parts if isinstance(p, str))
    assert "\n".join(x for x in flat.splitlines() if not STAMP.match(x)) == blind


def test_lmms_eval_chat_messages_alternate_timestamp_and_frame(sureon_proto):
    for item in sureon_proto.units[:3]:
        doc = {"uid": item.uid, "category": item.category, "item_json": _item_json(item),
               "video_root": str(sureon_proto.source.video_root)}
        frames = lmms_sureon.doc_to_visual(doc, NOBLUR)
        (turn,) = lmms_sureon.doc_to_messages(doc, NOBLUR)
        assert turn["role"] == "user"
        content = turn["content"]
        _assert_alternates([(c["type"], c.get("text", c.get("url"))) for c in content], frames.timestamps)
        images = [c["url"] for c in content if c["type"] == "image"]
        assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(images, frames))
        assert all(im.info["timestamp_s"] == t for im, t in zip(images, frames.timestamps))
        # blind: one text part, the blind prompt
        (blind,) = lmms_sureon.doc_to_messages(doc, {"mode": "blind"})
        assert blind["content"] == [{"type": "text", "text": build_prompt(item)}]


def test_vlmevalkit_messages_alternate_timestamp_and_frame_like_lmms_eval(sureon_proto, tmp_path):
    store = FrameStore(tmp_path)
    for item in sureon_proto.units[:3]:
        text, files, error = sureon_proto.prompt(item, store)
        assert error is None and 4 <= len(files) <= 8
        message = sureon_proto.message(item, text, files)
        doc = {"uid": item.uid, "category": item.category, "item_json": _item_json(item),
               "video_root": str(sureon_proto.source.video_root)}
        frames = lmms_sureon.doc_to_visual(doc, NOBLUR)
        _assert_alternates([(m["type"], m["value"]) for m in message], frames.timestamps)
        assert [m["value"] for m in message if m["type"] == "image"] == files  # every frame once, in order
        ours = [np.asarray(Image.open(f).convert("RGB")) for f in files]
        assert all(np.array_equal(a, np.asarray(b)) for a, b in zip(ours, frames))
        # the same texts in the same places as lmms-eval's chat turn
        (turn,) = lmms_sureon.doc_to_messages(doc, NOBLUR)
        assert [m["value"] for m in message if m["type"] == "text"] == \
            [c["text"] for c in turn["content"] if c["type"] == "text"]
    blind = protocol_for(PRESETS["Sureon_Synthetic_blind"])
    text, files, _ = blind.prompt(blind.units[0], store)
    assert blind.message(blind.units[0], text, files) == [{"type": "text", "value": build_prompt(blind.units[0])}]


def test_the_openai_bridge_sends_the_interleaved_layout():
    from medhorizon_tasks.adapters.lmms_eval.bridges.openai import OpenAICompatible

    model = OpenAICompatible(model="m", api_key="x", base_url="http://127.0.0.1:9/v1")
    images = [Image.fromarray(np.full((8, 8, 3), v, np.uint8)) for v in (10, 200)]
    parts = ["This is a clip from 1.0 s to 2.0 s of a surgical video.", "Frame 1 at 1.0 s:", 0,
             "Frame 2 at 2.0 s:", 1, "\nQuestion: q"]
    frames = PlannedFrames(images, timestamps=(1.0, 2.0), interleaved=parts)
    content = model.planned_payload("ignored context", frames, {"max_new_tokens": 5})["messages"][0]["content"]
    _assert_alternates([(c["type"].replace("image_url", "image"), c.get("text")) for c in content], (1.0, 2.0))
    with pytest.raises(ValueError, match="every frame exactly once"):
        PlannedFrames(images, timestamps=(1.0, 2.0), interleaved=["a", 0, "b"])


def _item_json(item) -> str:
    """The item's own record, as lmms-eval's ``process_docs`` stores it."""
    import json

    from medhorizon_tasks.core.safeio import iter_jsonl

    for _, rec in iter_jsonl(_data_path()):
        if str(rec["uid"]) == item.uid:
            return json.dumps(rec)
    raise AssertionError(item.uid)


def _data_path():
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

    return build_sureon_sample().data_path


# Issue 40, item 1: every runnable row of Table 3 gets the interleaved layout. The adapters whose requests the e2e
# spy checks read through the real lmms-eval CLI (text "Frame k at t s:", then that frame, in plan order):
E2E_CHECKED = {"medhorizon_openai": "test_sureon_interleaved_e2e.py", "medhorizon_qwen3_vl": "test_bridges_e2e.py",
               "medhorizon_qwen2_5_vl": "test_bridges_e2e.py", "medhorizon_gemma4": "test_rows_e2e.py",
               "medhorizon_molmo2": "test_rows_e2e.py", "medhorizon_gemma3": "test_rows_e2e.py"}


def test_every_runnable_sureon_row_says_how_its_frames_reach_the_model(capsys):
    from medhorizon_tasks.benchmarks.sureon.model_settings import SETTINGS
    from medhorizon_tasks.commands.main import main

    rows = [s for s in SETTINGS if s.runnable]
    assert len(rows) == 8 and {s.adapter for s in rows} == set(E2E_CHECKED), "a new row's bridge needs its spy check"
    assert main(["protocol", "--list"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    native_video = {"medhorizon_qwen3_vl", "medhorizon_qwen2_5_vl", "medhorizon_gemma4", "medhorizon_molmo2"}
    for s in rows:
        line = listed[s.row]
        assert 'frames: each an image right after its "Frame k at t s:" line (Fig. 17' in line, line
        assert ("through the model's image input, not its video input" in line) == (s.adapter in native_video), line
        assert "one video" not in s.note and "<t seconds>" not in s.note, s.note
    assert "frames:" not in listed["qwen3_vl_8b"], "MedHorizon's rows fix no layout"


def test_the_bridges_content_is_the_layout_with_its_line_breaks():
    from medhorizon_tasks.adapters.lmms_eval.bridges.frames import interleaved_content, interleaved_images

    images = [Image.fromarray(np.full((8, 8, 3), v, np.uint8)) for v in (10, 200)]
    parts = ["This is a clip from 1.0 s to 2.0 s of a surgical video.", "Frame 1 at 1.0 s:", 0,
             "Frame 2 at 2.0 s:", 1, "\nQuestion: q"]
    frames = PlannedFrames(images, timestamps=(1.0, 2.0), interleaved=parts)
    content = interleaved_content(frames, lambda im: {"type": "image", "v": int(np.asarray(im)[0, 0, 0])},
                                  suffix=" Think.")
    assert content == [{"type": "text", "text": parts[0] + "\n"}, {"type": "text", "text": "Frame 1 at 1.0 s:\n"},
                       {"type": "image", "v": 10}, {"type": "text", "text": "\nFrame 2 at 2.0 s:\n"},
                       {"type": "image", "v": 200}, {"type": "text", "text": "\n\nQuestion: q Think."}]
    # the texts joined with an image mark where each frame is: the one-text prompt with the marks in place
    joined = "".join(c["text"] if c["type"] == "text" else "<image>" for c in interleaved_content(frames))
    assert joined == "\n".join("<image>" if isinstance(p, int) else p for p in parts)
    assert [np.asarray(im)[0, 0, 0] for im in interleaved_images(frames)] == [10, 200]
    assert interleaved_content(PlannedFrames(images, timestamps=(1.0, 2.0))) is None, "no layout: the bridge's own"
