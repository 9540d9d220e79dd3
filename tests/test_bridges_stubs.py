"""Bridges whose model cannot be built offline, on lmms-eval's REAL wrapper classes with recording stubs.

InternVL3/3.5 and VideoLLaMA3 load remote code (``trust_remote_code``), and
lmms-eval's LLaVA-OneVision / LLaVA-Video / LongVA wrappers import the
LLaVA-NeXT and LongVA packages (not on PyPI); none of them can be built
from a config offline. Here the bridge class is the one lmms-eval's registry
returns for ``--model medhorizon_*`` and its ``__init__`` and (for requests
without planned frames) ``generate_until`` are lmms-eval's code; only what
the wrapper loads is a stub (tests/bridge_stubs.py). The requests carry the
real task hook (``medhorizon.doc_to_visual``) over the synthetic benchmark,
so the frames are the protocol's own.
"""

import functools
import sys

import numpy as np
import pytest
import torch
from lmms_eval.api.instance import Instance
from PIL import Image

from bridge_stubs import (
    Recorder,
    StubFromPretrained,
    StubImageProcessor,
    StubModel,
    StubTokenizer,
    StubVideoLLaMA3Processor,
    install_llava_packages,
)
from medhorizon_tasks.adapters.lmms_eval import medhorizon as hooks
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import Item
from medhorizon_tasks.core.video.planned_frames import PlannedFrames

TASK, SPLIT = "medhorizon_synthetic", "test"
VISUAL = {"mode": "visual", "fps": 1, "cap": 64, "max_side": 448}
REVERSED = {"mode": "visual", "frames": 8, "order": "reverse", "max_side": 448}
TEXT = {"mode": "text"}
GEN = {"max_new_tokens": 1, "temperature": 0, "do_sample": False, "until": ["\n\n"]}


def failed_video(doc):
    """The visuals of an item whose video failed."""
    return PlannedFrames(error="video cannot be opened")


@pytest.fixture(scope="module")
def docs(synthetic):
    return hooks.process_docs_synthetic(None)


def _request(doc_id: int, kwargs: dict, docs, visual=None) -> Instance:
    doc = docs[doc_id]
    visual = visual or functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=kwargs)
    context = hooks.doc_to_text(doc, kwargs)
    return Instance(request_type="generate_until", arguments=(context, dict(GEN), visual, doc_id, TASK, SPLIT), idx=0,
                    metadata={"task": TASK, "doc_id": doc_id, "repeats": 1})


def _plan(docs, doc_id: int, kwargs: dict):
    doc = docs[doc_id]
    return load_frames(Item.from_record(doc), FrameSetting.from_kwargs(kwargs), doc["video_root"])


def _attach(model, docs):
    model.task_dict = {TASK: {SPLIT: {i: docs[i] for i in range(len(docs))}}}
    return model


def _model_class(name: str):
    from lmms_eval.models import get_model

    return get_model(name)


# ------------------------------------------------------------------ InternVL3 / InternVL3.5


@pytest.fixture
def internvl(monkeypatch):
    import lmms_eval.models.simple.internvl3 as wrapper

    rec = Recorder()
    model = StubModel(rec, answers=["first", "third"])
    monkeypatch.setattr(wrapper, "AutoModel", StubFromPretrained(rec, "AutoModel", model))
    monkeypatch.setattr(wrapper, "AutoTokenizer", StubFromPretrained(rec, "AutoTokenizer", StubTokenizer(rec)))
    return rec


@pytest.mark.parametrize("name", ["medhorizon_internvl3", "medhorizon_internvl3_5"])
def test_internvl_gets_frame_prefixed_video_with_one_tile_a_frame(name, internvl, docs):
    from lmms_eval.models.simple.internvl3 import InternVL3 as Wrapper

    from medhorizon_tasks.adapters.lmms_eval.bridges.internvl import frame_prefix

    cls = _model_class(name)
    assert issubclass(cls, Wrapper)
    model = _attach(cls(pretrained="stub/internvl", device_map="auto"), docs)
    requests = [_request(0, VISUAL, docs), _request(0, TEXT, docs), _request(1, REVERSED, docs)]
    answers = model.generate_until(requests)
    chats = internvl.named("chat")
    assert len(chats) == 3
    # planned frames first, in request order; the text-only request goes to lmms-eval's own generate_until last
    (pv0, q0, gen0), kw0 = chats[0]
    plan, frames = _plan(docs, 0, VISUAL)
    n = len(plan)
    assert pv0.shape == (n, 3, 448, 448) and pv0.dtype == torch.bfloat16
    assert kw0["num_patches_list"] == [1] * n
    assert q0 == frame_prefix(n) + requests[0].args[0]
    assert q0.startswith("Frame1: <image>\nFrame2: <image>\n") and q0.count("<image>") == n
    assert gen0 == {"num_beams": 1, "max_new_tokens": 1, "do_sample": False}
    from lmms_eval.models.simple.internvl3 import build_transform

    from medhorizon_tasks.core.video.size import InternVLTiles, requested_size

    with requested_size(InternVLTiles(448, 1)):  # the bridge asks the decoder for its tile's size
        _, tile_frames = _plan(docs, 0, VISUAL)
    assert tile_frames.shape[1:3] == (448, 448)
    expected = build_transform(448)(Image.fromarray(tile_frames[0])).to(torch.bfloat16)
    assert torch.equal(pv0[0], expected), "the first tile is the first planned frame, decoded at the tile's size"
    (pv_text, q_text, _), _ = chats[2]
    assert pv_text is None and q_text == requests[1].args[0], "no planned frames: the wrapper's own path"
    assert answers == ["first", "B", "third"]


def test_internvl_tile_budget_is_explicit(internvl, docs):
    model = _attach(_model_class("medhorizon_internvl3")(pretrained="stub", device_map="auto", frame_tiles=6), docs)
    model.generate_until([_request(0, REVERSED, docs)])
    (pv, _, _), kw = internvl.named("chat")[0]
    # 128x96 frames at most 6 tiles: a 3x2 grid plus the thumbnail
    assert kw["num_patches_list"] == [7] * len(_plan(docs, 0, REVERSED)[0])
    assert pv.shape == (7 * 8, 3, 448, 448)
    with pytest.raises(ValueError, match="frame_tiles"):
        _model_class("medhorizon_internvl3")(pretrained="stub", device_map="auto", frame_tiles=0)


# ------------------------------------------------------------------ VideoLLaMA3


@pytest.fixture
def videollama3(monkeypatch):
    import lmms_eval.models.simple.videollama3 as wrapper

    rec = Recorder()
    monkeypatch.setattr(wrapper, "AutoModelForCausalLM", StubFromPretrained(rec, "AutoModel", StubModel(rec)))
    monkeypatch.setattr(wrapper, "AutoProcessor", StubFromPretrained(rec, "AutoProcessor", StubVideoLLaMA3Processor(rec)))
    return rec


def _videollama3(docs):
    cls = _model_class("medhorizon_videollama3")
    return _attach(cls(pretrained="stub/videollama3", device="cpu", device_map="auto", use_flash_attention_2=False),
                   docs)


def test_videollama3_gets_one_video_with_the_planned_times(videollama3, docs):
    model = _videollama3(docs)
    image = Image.new("RGB", (32, 24))
    other_task = _request(0, TEXT, docs, visual=lambda doc: [image])  # another task's plain image list
    requests = [_request(0, VISUAL, docs), other_task]
    assert model.generate_until(requests) == ["B", "B"]
    calls = videollama3.named("processor")
    (_, first), (_, second) = calls
    plan, frames = _plan(docs, 0, VISUAL)
    [turn] = first["conversation"]
    video, text = turn["content"]
    assert video["type"] == "video" and np.array_equal(video["video"], frames)
    assert video["timestamps"] == list(plan.timestamps) and video["num_frames"] == len(plan)
    assert text == {"type": "text", "text": requests[0].args[0]}
    (_, gen), = videollama3.named("generate")[:1]
    assert gen["pixel_values"].dtype == torch.bfloat16 and gen["max_new_tokens"] == 1
    assert second["conversation"] == [{"role": "user", "content": [{"type": "image", "image": image},
                                                                  {"type": "text", "text": other_task.args[0]}]}]


def test_videollama3_perturbed_order_gets_evenly_spaced_times(videollama3, docs):
    model = _videollama3(docs)
    model.generate_until([_request(0, REVERSED, docs)])
    (_, call), = videollama3.named("processor")
    video = call["conversation"][0]["content"][0]
    plan, frames = _plan(docs, 0, REVERSED)
    assert list(plan.timestamps) == sorted(plan.timestamps, reverse=True)
    assert np.array_equal(video["video"], frames), "frames in the perturbed order"
    lo, hi = min(plan.timestamps), max(plan.timestamps)
    assert video["timestamps"] == pytest.approx(list(np.linspace(lo, hi, len(plan))))


def test_videollama3_item_with_a_failed_video_gets_the_question_alone(videollama3, docs):
    request = _request(0, VISUAL, docs, visual=failed_video)
    assert _videollama3(docs).generate_until([request]) == ["B"]
    (_, call), = videollama3.named("processor")
    assert call["conversation"] == [{"role": "user", "content": [{"type": "text", "text": request.args[0]}]}]


# ------------------------------------------------------------------ LLaVA-OneVision, LLaVA-Video, LongVA

_LLAVA_MODULES = ["lmms_eval.models.simple.llava_onevision", "lmms_eval.models.simple.llava_vid",
                  "lmms_eval.models.simple.longva", "medhorizon_tasks.adapters.lmms_eval.bridges.llava",
                  "medhorizon_tasks.adapters.lmms_eval.bridges.longva"]


@pytest.fixture
def llava(tmp_path_factory):
    """Stand-ins for the llava / longva packages; the wrapper modules are imported fresh against them."""
    rec = Recorder()
    config = type("Config", (), {"image_aspect_ratio": "anyres", "mm_use_im_start_end": False})()
    model = StubModel(rec, config=config)
    stubs = (model, StubTokenizer(rec), StubImageProcessor(rec))
    for name in _LLAVA_MODULES:
        sys.modules.pop(name, None)
    added = install_llava_packages(rec, *stubs)
    folder = tmp_path_factory.mktemp("stub_checkpoint")
    (folder / "config.json").write_text('{"model_type": "llama"}')
    yield rec, str(folder)
    for name in added + _LLAVA_MODULES:
        sys.modules.pop(name, None)


def _llava_model(name, folder, docs, **kwargs):
    return _attach(_model_class(name)(pretrained=folder, device="cpu", device_map="auto",
                                      conv_template="qwen_1_5", **kwargs), docs)


@pytest.mark.parametrize("name", ["medhorizon_llava_onevision", "medhorizon_longva"])
def test_llava_style_gets_one_video_of_all_planned_frames(name, llava, docs):
    rec, folder = llava
    model = _llava_model(name, folder, docs)
    # LongVA's wrapper cannot take a request without visuals (IndexError): only OneVision gets the text item
    requests = [_request(0, VISUAL, docs)] + ([_request(0, TEXT, docs)] if "onevision" in name else [])
    assert model.generate_until(requests) == ["B"] * len(requests)
    plan, frames = _plan(docs, 0, VISUAL)
    [((preprocessed,), _)] = rec.named("preprocess")
    assert np.array_equal(preprocessed, frames), "every planned frame, decoded by the protocol, in order"
    generated = rec.named("generate")
    [video] = generated[0][1]["images"]
    assert video.shape[0] == len(plan) == 64
    assert generated[0][1]["modalities"] == ["video"]
    (prompt_video,), _ = rec.named("prompt")[0]
    assert prompt_video.count("<image>") == 1 and f"<image>\n{requests[0].args[0]}" in prompt_video
    if len(requests) == 2:
        (prompt_text,), _ = rec.named("prompt")[1]
        assert "<image>" not in prompt_text and generated[1][1]["images"] is None
    assert model._planned == {}, "each plan is released once it is answered"


def test_llava_video_gets_its_time_instruction_with_the_planned_times(llava, docs):
    rec, folder = llava
    model = _llava_model("medhorizon_llava_vid", folder, docs)
    model.generate_until([_request(0, VISUAL, docs)])
    plan, frames = _plan(docs, 0, VISUAL)
    [((preprocessed,), _)] = rec.named("preprocess")
    assert np.array_equal(preprocessed, frames)
    [(_, kw)] = rec.named("generate")
    assert kw["modalities"] == "video" and kw["images"][0].shape[0] == len(plan)
    (prompt,), _ = rec.named("prompt")[0]
    times = ",".join(f"{t:.2f}s" for t in plan.timestamps)
    duration = hooks.doc_to_visual(docs[0], VISUAL).duration_s  # the video file's, as the hook measured it
    assert (f"The video lasts for {duration:.2f} seconds, and {len(plan)} frames are uniformly "
            f"sampled from it. These frames are located at {times}.") in prompt
    assert prompt.count("<image>") == 1 and _request(0, VISUAL, docs).args[0] in prompt


def test_llava_video_time_instruction_can_be_turned_off(llava, docs):
    rec, folder = llava
    _llava_model("medhorizon_llava_vid", folder, docs, add_time_instruction=False).generate_until(
        [_request(0, VISUAL, docs)])
    (prompt,), _ = rec.named("prompt")[0]
    assert "The video lasts for" not in prompt and rec.named("generate")[0][1]["modalities"] == "video"


def test_llava_style_bridges_refuse_a_backend_that_bypasses_load_video(llava, docs):
    _, folder = llava
    with pytest.raises(ValueError, match="decord"):
        _llava_model("medhorizon_longva", folder, docs, video_decode_backend="pyav")


@pytest.mark.parametrize("name", ["medhorizon_llava_vid", "medhorizon_longva"])
def test_an_item_with_a_failed_video_does_not_stop_wrappers_that_need_visuals(name, llava, docs):
    rec, folder = llava
    model = _llava_model(name, folder, docs)
    assert model.generate_until([_request(0, VISUAL, docs, visual=failed_video)]) == ["B"]
    [((frames,), _)] = rec.named("preprocess")
    assert frames.shape[0] == 1 and not frames.any(), "one blank frame; the item is scored as a video error"
