"""Recording stand-in for Hulu-Med's remote processor (VideoLLaMA3's interface, ``AutoProcessor``,
trust_remote_code): ``processor(conversation=[{"role": "user", "content": [{"type": "video", "video": frames,
"timestamps": [...], "num_frames": n}, {"type": "text", "text": question}]}], add_generation_prompt=True,
return_tensors="pt")``; ``batch_decode(ids, skip_special_tokens=True, use_think=False)``.

Like the real one it prints ``Time {t:.1f}s:`` and one image token before each frame, then the text, and
tokenizes that with the folder's tokenizer; it records the conversation it got.
"""

import re

import numpy as np
import torch
from transformers import ProcessorMixin

from .recording import frame_facts, record

IMAGE_TOKEN = "<|image_pad|>"


class HuluMedProcessor(ProcessorMixin):
    """``from_pretrained`` is ProcessorMixin's: it loads the folder's tokenizer (the one sub-processor here)."""

    def __init__(self, tokenizer=None, chat_template=None, **kwargs):
        super().__init__(tokenizer, chat_template=chat_template, **kwargs)

    def __call__(self, conversation=None, add_system_prompt=False, add_generation_prompt=False, return_tensors=None,
                 **kwargs):
        text, frames, parts = "", [], []
        for turn in conversation:
            text += f"<|im_start|>{turn['role']}\n"
            for part in turn["content"]:
                if part["type"] == "video":
                    video = np.asarray(part["video"])
                    stamps = [float(t) for t in part["timestamps"]]
                    if not (len(video) == len(stamps) == part.get("num_frames", len(stamps))):
                        raise ValueError(f"{len(video)} frames, {len(stamps)} timestamps, num_frames "
                                         f"{part.get('num_frames')}")
                    text += ", ".join(f"Time {t:.1f}s:{IMAGE_TOKEN}" for t in stamps) + "\n"
                    frames.extend(video)
                    parts.append({"type": "video", "frames": frame_facts(video), "timestamps": stamps,
                                  "num_frames": part.get("num_frames")})
                elif part["type"] == "text":
                    text += part["text"]
                    parts.append({"type": "text", "text": part["text"]})
                else:
                    raise ValueError(f"unknown content type {part['type']!r}")
            text += "<|im_end|>\n"
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        record("processor", parts=parts, prompt=text, add_generation_prompt=add_generation_prompt)
        out = self.tokenizer(text, return_tensors=return_tensors)
        if frames:
            out["pixel_values"] = torch.from_numpy(np.stack(frames)).permute(0, 3, 1, 2).float() / 255.0
        return dict(out)

    def batch_decode(self, ids, skip_special_tokens=True, use_think=True, **kwargs):
        record("batch_decode", use_think=use_think)
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=skip_special_tokens)
        return texts if use_think else [re.sub(r"<think>.*?</think>", "", t, flags=re.S) for t in texts]
