"""MiniCPM-V 2.6, VideoChat-Flash and Hulu-Med: bridges over models whose code is on the model hub (remote code),
tested on lmms-eval's REAL wrapper classes with recording stand-ins that implement each model's documented interface:

* MiniCPM-V 2.6 (model card, video example): ``model.chat(image=None, msgs=[{"role": "user", "content": frames +
  [question]}], tokenizer=..., use_image_id=False, max_slice_nums=2)`` returning the answer text;
* VideoChat-Flash (its remote ``chat``): ``chat(video_path, tokenizer, question, ..., max_num_frames, media_dict,
  generation_config)`` calls its module's ``load_video(video_path, max_num_frames=..., media_dict=...)`` for
  ``(frames, time_msg)`` and prompts ``<image>\\n{time_msg} {question}``;
* Hulu-Med (its README): ``processor(conversation=..., ...)`` with a video part of frames and ``timestamps``,
  ``generate(..., modals=["video"])``, ``batch_decode(..., use_think=False)``.

The requests carry the real task hook (``medhorizon.doc_to_visual``) over the synthetic benchmark.
"""

import functools
import sys
import types

import numpy as np
import pytest
import torch
from lmms_eval.api.instance import Instance

from bridge_stubs import Recorder, StubFromPretrained, StubModel, StubTokenizer, StubVideoLLaMA3Processor
from medhorizon_tasks.adapters.lmms_eval import medhorizon as hooks
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import Item

TASK, SPLIT = "medhorizon_synthetic", "test"
VISUAL = {"mode": "visual", "frames": 6, "max_side": 448}
REVERSED = {"mode": "visual", "frames": 6, "order": "reverse", "max_side": 448}
TEXT = {"mode": "text"}
GEN = {"max_new_tokens": 3, "temperature": 0, "do_sample": False, "until": ["\n\n"]}


@pytest.fixture(scope="module")
def docs(synthetic):
    return hooks.process_docs_synthetic(None)


def _request(doc_id, kwargs, docs) -> Instance:
    visual = functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=kwargs)
    context = hooks.doc_to_text(docs[doc_id], kwargs)
    return Instance(request_type="generate_until", arguments=(context, dict(GEN), visual, doc_id, TASK, SPLIT), idx=0,
                    metadata={"task": TASK, "doc_id": doc_id, "repeats": 1})


def _plan(docs, doc_id, kwargs):
    doc = docs[doc_id]
    return load_frames(Item.from_record(doc), FrameSetting.from_kwargs(kwargs), doc["video_root"])


def _model(name, docs, **args):
    from lmms_eval.models import get_model

    model = get_model(name)(**args)
    model.task_dict = {TASK: {SPLIT: dict(enumerate(docs))}}
    return model


# ------------------------------------------------------------------ MiniCPM-V 2.6


class MiniCPMV26(StubModel):
    """MiniCPM-V 2.6's ``chat``: the answer text (lmms-eval's wrapper expects the first MiniCPM-V's 3-tuple)."""

    def chat(self, image, msgs, tokenizer, **kwargs):
        self.recorder.add("chat", image=image, msgs=msgs, **kwargs)
        return "B"


def test_minicpm_v_gets_the_frames_as_its_video_message(monkeypatch, docs):
    import lmms_eval.models.simple.minicpm_v as wrapper

    rec = Recorder()
    monkeypatch.setattr(wrapper, "AutoModel", StubFromPretrained(rec, "AutoModel", MiniCPMV26(rec)))
    monkeypatch.setattr(wrapper, "AutoTokenizer", StubFromPretrained(rec, "AutoTokenizer", StubTokenizer(rec)))
    model = _model("medhorizon_minicpm_v", docs, pretrained="stub", device="cpu")
    request = _request(0, VISUAL, docs)
    assert model.generate_until([request]) == ["B"]
    (_, call), = rec.named("chat")
    plan, frames = _plan(docs, 0, VISUAL)
    [turn] = call["msgs"]
    *images, question = turn["content"]
    assert call["image"] is None and turn["role"] == "user" and question == request.args[0]
    assert len(images) == len(plan) == 6 and all(np.array_equal(np.asarray(i), f) for i, f in zip(images, frames))
    assert call["use_image_id"] is False and call["max_slice_nums"] == 2
    assert call["sampling"] is False and call["max_new_tokens"] == 3 and call["num_beams"] == 1
    with pytest.raises(ValueError, match="max_slice_nums"):
        _model("medhorizon_minicpm_v", docs, pretrained="stub", device="cpu", max_slice_nums=0)


# ------------------------------------------------------------------ VideoChat-Flash


@pytest.fixture
def videochat_remote(monkeypatch):
    """A stand-in for the remote module: module-level ``load_video`` and a model whose ``chat`` calls it."""
    rec = Recorder()
    remote = types.ModuleType("transformers_modules.stub_videochat.modeling_videochat_flash")

    def load_video(video_path, max_num_frames=512, media_dict=None):
        rec.add("original load_video", video_path)
        raise AssertionError("the file loader must not run for planned frames")

    class VideoChatFlashModel(StubModel):
        def chat(self, video_path, tokenizer, user_prompt, chat_history=None, return_history=True,
                 max_num_frames=512, media_dict=None, generation_config=None):
            frames, time_msg = remote.load_video(video_path, max_num_frames=max_num_frames, media_dict=media_dict)
            rec.add("chat", frames=frames, prompt=f"<image>\n{time_msg.strip()} {user_prompt}",
                    max_num_frames=max_num_frames, generation_config=generation_config)
            return "B"

        def half(self):
            return self

        def cuda(self, *args, **kwargs):
            return self

    VideoChatFlashModel.__module__ = remote.__name__
    remote.load_video = load_video
    remote.VideoChatFlashModel = VideoChatFlashModel
    monkeypatch.setitem(sys.modules, remote.__name__, remote)
    import lmms_eval.models.simple.videochat_flash as wrapper

    model = VideoChatFlashModel(rec)
    model.config.mm_local_num_frames = 4
    monkeypatch.setattr(wrapper, "AutoModel", StubFromPretrained(rec, "AutoModel", model))
    monkeypatch.setattr(wrapper, "AutoTokenizer", StubFromPretrained(rec, "AutoTokenizer", StubTokenizer(rec)))
    monkeypatch.setattr(wrapper.torch.cuda, "device_count", lambda: 1)  # the wrapper asserts a GPU
    return rec, remote, load_video


def test_videochat_flash_chat_gets_the_planned_frames_and_times(videochat_remote, docs):
    rec, remote, original = videochat_remote
    model = _model("medhorizon_videochat_flash", docs, pretrained="stub", device="cpu", device_map="auto")
    request = _request(0, VISUAL, docs)
    assert model.generate_until([request]) == ["B"]
    (_, call), = rec.named("chat")
    plan, frames = _plan(docs, 0, VISUAL)
    assert call["frames"].shape[0] == 8 == call["max_num_frames"], "6 planned frames padded to groups of 4"
    assert np.array_equal(call["frames"][:6], np.stack(frames))
    assert np.array_equal(call["frames"][6], call["frames"][5]) and np.array_equal(call["frames"][7], frames[-1])
    times = [*plan.timestamps, plan.timestamps[-1], plan.timestamps[-1]]
    sec = ", ".join(str(round(t, 1)) for t in times)
    assert call["prompt"].startswith("<image>\nThe video lasts for ")
    assert f"and 8 frames are uniformly sampled at {sec} seconds. {request.args[0]}" in call["prompt"]
    assert call["generation_config"]["max_new_tokens"] == 3 and call["generation_config"]["do_sample"] is False
    assert remote.load_video is original and not rec.named("original load_video"), "the loader is restored"


def test_videochat_flash_perturbed_order_gets_evenly_spaced_times(videochat_remote, docs):
    rec, _, _ = videochat_remote
    _model("medhorizon_videochat_flash", docs, pretrained="stub", device="cpu",
           device_map="auto").generate_until([_request(0, REVERSED, docs)])
    (_, call), = rec.named("chat")
    plan, _ = _plan(docs, 0, REVERSED)
    even = np.linspace(min(plan.timestamps), max(plan.timestamps), len(plan.timestamps))
    assert ", ".join(str(round(t, 1)) for t in even) in call["prompt"]


# ------------------------------------------------------------------ Hulu-Med


def test_hulu_med_gets_one_video_with_its_timestamps(monkeypatch, docs):
    import lmms_eval.models.simple.videollama3 as wrapper

    rec = Recorder()

    class HuluProcessor(StubVideoLLaMA3Processor):
        def batch_decode(self, ids, skip_special_tokens=True, **kwargs):
            rec.add("batch_decode", **kwargs)
            return [" B "]

    monkeypatch.setattr(wrapper, "AutoModelForCausalLM", StubFromPretrained(rec, "AutoModel", StubModel(rec)))
    monkeypatch.setattr(wrapper, "AutoProcessor", StubFromPretrained(rec, "AutoProcessor", HuluProcessor(rec)))
    model = _model("medhorizon_hulu_med", docs, pretrained="stub/hulu", device="cpu", device_map="auto",
                   use_flash_attention_2=False)
    request = _request(0, VISUAL, docs)
    assert model.generate_until([request]) == ["B"]
    (_, call), = rec.named("processor")
    plan, frames = _plan(docs, 0, VISUAL)
    video, text = call["conversation"][0]["content"]
    assert video["type"] == "video" and np.array_equal(video["video"], frames)
    assert video["timestamps"] == list(plan.timestamps) and video["num_frames"] == 6
    assert text == {"type": "text", "text": request.args[0]}
    (_, gen), = rec.named("generate")
    assert gen["modals"] == ["video"] and gen["pixel_values"].dtype == torch.bfloat16
    (_, decode), = rec.named("batch_decode")
    assert decode == {"use_think": False}
    assert rec.named("AutoModel.from_pretrained")[0][0] == ("stub/hulu",)
