"""``medhorizon_gemma4`` / ``medhorizon_molmo2`` (one video with its timestamps) and ``medhorizon_gemma3`` (timed
images), on lmms-eval's REAL wrapper classes.

Gemma 4 and Molmo2: the processor is transformers' REAL one (Gemma4Processor / Molmo2Processor, built offline over
a byte-level tokenizer); only the model is a stand-in that records what ``generate`` receives, so the test reads
the prompt the model would get: one time label per planned frame, at the planned time, before that frame's video
tokens, and no image tokens. Gemma 3: a recording processor (the chat-template interface the wrapper calls).
The requests carry the real task hook over the synthetic benchmark.
"""

import functools
import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lmms_eval.api.instance import Instance

from bridge_stubs import Recorder, StubFromPretrained, StubModel, StubTokenizer
from medhorizon_tasks.adapters.lmms_eval import medhorizon as hooks
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import Item
from tiny_vlm import gemma4_processor, molmo2_processor

TASK, SPLIT = "medhorizon_synthetic", "test"
VISUAL = {"mode": "visual", "frames": 6, "max_side": 448}
REVERSED = {"mode": "visual", "frames": 6, "order": "reverse", "max_side": 448}
TEXT = {"mode": "text"}
GEN = {"max_new_tokens": 4, "temperature": 0, "do_sample": False, "until": ["\n\n"]}


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


def _attach(model, docs):
    model.task_dict = {TASK: {SPLIT: dict(enumerate(docs))}}
    return model


class AnsweringModel(StubModel):
    """Records ``generate`` and answers "B" after the prompt (so the wrapper's decoding is exercised)."""

    def __init__(self, recorder, answer_id):
        super().__init__(recorder, config=SimpleNamespace(text_config=SimpleNamespace(max_position_embeddings=4096)))
        self.answer_id = answer_id

    @property
    def device(self):
        return self.weight.device

    def generate(self, *args, **kwargs):
        self.recorder.add("generate", *args, **kwargs)
        ids = kwargs["input_ids"]
        return torch.cat([ids, torch.full((ids.shape[0], 1), self.answer_id)], dim=1)


@pytest.fixture
def gemma4_wrapper(monkeypatch):
    import lmms_eval.models.simple.gemma4 as wrapper

    def install(processor):
        rec = Recorder()
        model = AnsweringModel(rec, processor.tokenizer.convert_tokens_to_ids("B"))
        monkeypatch.setattr(wrapper, "AutoModelForImageTextToText", StubFromPretrained(rec, "AutoModel", model))
        monkeypatch.setattr(wrapper, "AutoProcessor", StubFromPretrained(rec, "AutoProcessor", processor))
        return rec
    return install


def _model(name, docs, **args):
    from lmms_eval.models import get_model

    return _attach(get_model(name)(pretrained="stub", device="cpu", device_map="cpu", **args), docs)


def _prompt(processor, rec) -> str:
    (_, gen), = rec.named("generate")
    text = processor.tokenizer.decode(gen["input_ids"][0])
    return re.sub(r"(<\|video\|>)+", "<V>", text), gen


def test_gemma4_gets_one_video_with_the_planned_times(gemma4_wrapper, docs):
    from lmms_eval.models.simple.gemma4 import Gemma4 as Wrapper

    processor = gemma4_processor()
    rec = gemma4_wrapper(processor)
    model = _model("medhorizon_gemma4", docs, max_soft_tokens=70)
    assert isinstance(model, Wrapper)
    request = _request(0, VISUAL, docs)
    assert model.generate_until([request]) == ["B"]
    prompt, gen = _prompt(processor, rec)
    plan, _ = _plan(docs, 0, VISUAL)
    assert re.findall(r"(\d\d:\d\d) <\|boi\|><V><\|eoi\|>", prompt) == _stamps(plan.timestamps), "each frame after its planned time"
    assert "<|image|>" not in prompt, "no image tokens: the frames are the model's video input"
    assert gen["pixel_values_videos"].shape[0] == len(plan) == 6
    assert request.args[0].strip()[-40:] in prompt


def _stamps(times):
    return [f"{int(t // 60):02d}:{int(t % 60):02d}" for t in times]


def test_gemma4_perturbed_order_gets_evenly_spaced_times(gemma4_wrapper, docs):
    processor = gemma4_processor()
    rec = gemma4_wrapper(processor)
    _model("medhorizon_gemma4", docs).generate_until([_request(0, REVERSED, docs)])
    prompt, _ = _prompt(processor, rec)
    plan, _ = _plan(docs, 0, REVERSED)
    assert list(plan.timestamps) == sorted(plan.timestamps, reverse=True)
    even = np.linspace(min(plan.timestamps), max(plan.timestamps), len(plan.timestamps))
    assert re.findall(r"(\d\d:\d\d) <\|boi\|>", prompt) == _stamps(even) != _stamps(plan.timestamps)


def test_gemma4_text_only_item_goes_to_the_wrappers_path(gemma4_wrapper, docs):
    processor = gemma4_processor()
    rec = gemma4_wrapper(processor)
    model = _model("medhorizon_gemma4", docs)
    assert model.generate_until([_request(0, TEXT, docs)]) == ["B"]
    prompt, gen = _prompt(processor, rec)
    assert "pixel_values_videos" not in gen and "<|boi|>" not in prompt


def test_molmo2_gets_one_video_with_the_planned_times(gemma4_wrapper, docs):
    processor = molmo2_processor()
    rec = gemma4_wrapper(processor)
    model = _model("medhorizon_molmo2", docs)
    assert model.generate_until([_request(1, VISUAL, docs)]) == ["B"]
    (_, gen), = rec.named("generate")
    prompt = processor.tokenizer.decode(gen["input_ids"][0])
    plan, _ = _plan(docs, 1, VISUAL)
    assert re.findall(r"(\d+\.\d) <(?:frame_start|im_start)>", prompt) == [f"{t:.1f}" for t in plan.timestamps]
    assert "<|image|>" not in prompt and gen["pixel_values_videos"] is not None


# ------------------------------------------------------------------ Gemma 3 (MedGemma 1.5): timed images


class RecordingGemma3Processor:
    """The interface lmms-eval's gemma3 wrapper calls: ``apply_chat_template(messages, tokenize=True, ...)``."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.tokenizer = StubTokenizer(recorder)

    def apply_chat_template(self, messages, **kwargs):
        self.recorder.add("apply_chat_template", messages, **kwargs)
        return {"input_ids": torch.tensor([[5, 6, 7]]), "pixel_values": torch.zeros(2, 3)}

    def batch_decode(self, ids, **kwargs):
        return ["B"]


def test_gemma3_gets_each_frame_after_its_time(monkeypatch, docs):
    import lmms_eval.models.simple.gemma3 as wrapper

    rec = Recorder()
    model = StubModel(rec, config=SimpleNamespace(text_config=SimpleNamespace(max_position_embeddings=4096)))
    monkeypatch.setattr(wrapper, "Gemma3ForConditionalGeneration", StubFromPretrained(rec, "Model", model))
    monkeypatch.setattr(wrapper, "AutoTokenizer", StubFromPretrained(rec, "AutoTokenizer", StubTokenizer(rec)))
    monkeypatch.setattr(wrapper, "AutoProcessor", StubFromPretrained(rec, "AutoProcessor",
                                                                     RecordingGemma3Processor(rec)))
    bridge = _model("medhorizon_gemma3", docs)
    request = _request(0, VISUAL, docs)
    assert bridge.generate_until([request]) == ["B"]
    ((messages,), _), = rec.named("apply_chat_template")
    user = messages[0][1]["content"]
    plan, frames = _plan(docs, 0, VISUAL)
    assert [p["type"] for p in user] == ["text", "image"] * len(plan) + ["text"]
    assert [p["text"] for p in user[:-1:2]] == [f"<{t:.1f} seconds>" for t in plan.timestamps]
    assert all(np.array_equal(np.asarray(p["image"]), f) for p, f in zip(user[1::2], frames))
    assert user[-1]["text"] == request.args[0]
    (_, gen), = rec.named("generate")
    assert gen["max_new_tokens"] == 4 and gen["do_sample"] is False
