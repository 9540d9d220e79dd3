"""Recording stand-ins for models that cannot be built offline (remote code, LLaVA-NeXT / LongVA packages).

The bridges are tested on lmms-eval's REAL wrapper classes; only what those
wrappers load (the model, tokenizer, processor, and for LLaVA the ``llava`` /
``longva`` package functions they call) is replaced by these stubs, which
record every call so a test can check what the model would have received.
"""

from __future__ import annotations

import enum
import sys
import types
from types import SimpleNamespace

import torch

IMAGE_TOKEN_INDEX = -200


class Recorder:
    def __init__(self):
        self.calls: list[tuple[str, tuple, dict]] = []

    def add(self, name, *args, **kwargs):
        self.calls.append((name, args, kwargs))

    def named(self, name) -> list[tuple[tuple, dict]]:
        return [(a, k) for n, a, k in self.calls if n == name]


class StubModel(torch.nn.Module):
    """A model with one CPU weight (so its device is known) that records ``chat`` / ``generate``."""

    def __init__(self, recorder: Recorder, config=None, answers=None):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.recorder = recorder
        self.config = config or SimpleNamespace()
        self._answers = iter(answers or [])

    def _answer(self) -> str:
        return next(self._answers, "B")

    def chat(self, tokenizer, pixel_values, question, generation_config, **kwargs):
        self.recorder.add("chat", pixel_values, question, generation_config, **kwargs)
        return self._answer(), []

    def generate(self, *args, **kwargs):
        self.recorder.add("generate", *args, **kwargs)
        return torch.tensor([[1, 2]])

    def tie_weights(self):
        pass


class StubTokenizer:
    pad_token_id = 0
    eos_token_id = 1
    padding_side = "right"
    name_or_path = "stub"

    def __init__(self, recorder: Recorder, answer="B"):
        self.recorder = recorder
        self.answer = answer

    def encode(self, text, add_special_tokens=False):
        return list(text.encode("utf-8"))

    def decode(self, ids, **kwargs):
        return ""

    def batch_decode(self, ids, skip_special_tokens=True, **kwargs):
        return [self.answer for _ in range(len(ids))]


class StubFromPretrained:
    """``AutoX``-like: ``from_pretrained`` records its arguments and returns the object it was given."""

    def __init__(self, recorder: Recorder, name: str, obj):
        self.recorder, self.name, self.obj = recorder, name, obj

    def from_pretrained(self, *args, **kwargs):
        self.recorder.add(f"{self.name}.from_pretrained", *args, **kwargs)
        return self.obj


class StubVideoLLaMA3Processor:
    """VideoLLaMA3's remote-code processor: ``processor(conversation=..., ...)``."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.tokenizer = StubTokenizer(recorder)

    def __call__(self, conversation=None, **kwargs):
        self.recorder.add("processor", conversation=conversation, **kwargs)
        has_video = any(part.get("type") == "video" for turn in conversation for part in turn["content"])
        if not has_video:
            # lmms-eval's wrapper moves tensors with .cuda(): its own (text-only) path gets plain lists
            return {"input_ids": [[5, 6, 7]]}
        return {"input_ids": torch.tensor([[5, 6, 7]]), "pixel_values": torch.zeros(4, 3)}

    def batch_decode(self, ids, skip_special_tokens=True):
        return [" B "]


class StubImageProcessor:
    """LLaVA's image processor: records the frames it is asked to preprocess."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def preprocess(self, frames, return_tensors="pt"):
        self.recorder.add("preprocess", frames)
        return {"pixel_values": torch.zeros(len(frames), 3, 4, 4)}


# ------------------------------------------------------------------ llava / longva packages


class SeparatorStyle(enum.Enum):
    SINGLE = enum.auto()
    TWO = enum.auto()
    CHATML = enum.auto()


class Conversation:
    def __init__(self):
        self.roles = ("user", "assistant")
        self.messages: list = []
        self.sep, self.sep2, self.sep_style = "<|im_end|>", None, SeparatorStyle.CHATML

    def copy(self):
        return Conversation()

    def append_message(self, role, message):
        self.messages.append([role, message])

    def get_prompt(self) -> str:
        return "".join(f"<|im_start|>{r}\n{m}<|im_end|>\n" if m is not None else f"<|im_start|>{r}\n"
                       for r, m in self.messages)


def install_llava_packages(recorder: Recorder, model: StubModel, tokenizer: StubTokenizer,
                           image_processor: StubImageProcessor, names=("llava", "longva")) -> list[str]:
    """Put stand-ins for the LLaVA-NeXT (``llava``) and LongVA (``longva``) modules that lmms-eval's wrappers
    import into ``sys.modules``; returns the module names added."""
    added = []

    def tokenizer_image_token(prompt, tok, image_token_index=IMAGE_TOKEN_INDEX, return_tensors=None):
        recorder.add("prompt", prompt)
        ids = []
        for i, chunk in enumerate(prompt.split("<image>")):
            if i:
                ids.append(image_token_index)
            ids.extend(tok.encode(chunk))
        return torch.tensor(ids)

    def load_pretrained_model(pretrained, model_base, model_name, **kwargs):
        recorder.add("load_pretrained_model", pretrained, model_base, model_name, **kwargs)
        return tokenizer, model, image_processor, 32768

    class KeywordsStoppingCriteria:
        def __init__(self, keywords, tok, input_ids):
            self.keywords = keywords

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        added.append(name)
        return m

    for pkg in names:
        module(pkg, __path__=[])
        module(f"{pkg}.constants", DEFAULT_IM_END_TOKEN="<im_end>", DEFAULT_IM_START_TOKEN="<im_start>",
               DEFAULT_IMAGE_TOKEN="<image>", IMAGE_TOKEN_INDEX=IMAGE_TOKEN_INDEX, IGNORE_INDEX=-100)
        module(f"{pkg}.conversation", SeparatorStyle=SeparatorStyle, conv_templates={
            "qwen_1_5": Conversation(), "vicuna_v1": Conversation()})
        module(f"{pkg}.mm_utils", KeywordsStoppingCriteria=KeywordsStoppingCriteria,
               get_model_name_from_path=lambda p: str(p).rstrip("/").split("/")[-1],
               process_images=lambda *a, **k: None, tokenizer_image_token=tokenizer_image_token)
        module(f"{pkg}.model", __path__=[])
        module(f"{pkg}.model.builder", load_pretrained_model=load_pretrained_model)
        module(f"{pkg}.model.language_model", __path__=[])
        module(f"{pkg}.model.language_model.llava_llama", LlavaConfig=type("LlavaConfig", (), {}))
        module(f"{pkg}.model.language_model.llava_qwen", LlavaQwenConfig=type("LlavaQwenConfig", (), {}))
    return added
