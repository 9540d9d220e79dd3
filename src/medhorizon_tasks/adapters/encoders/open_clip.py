"""open-clip-torch image-text models as zero-shot image encoders (the paper's CLIP ViT-B/16: ``ViT-B-16/openai``).

Each frame goes through the model's own preprocessing (resize, centre crop, normalisation) and
``encode_image``; texts through its tokenizer and ``encode_text``. Similarity: cosine.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ...core.errors import MedHorizonError
from .torch_io import pil_images, torch_dtype

_PRECISION = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


class OpenClipEncoder:
    kind = "image"
    similarity = "cosine"

    def __init__(self, model_name: str, pretrained: str | None, *, device: str = "cpu", dtype: str = "float32"):
        try:
            import open_clip
            import torch
        except ImportError:
            raise MedHorizonError("--encoder open_clip:... needs open-clip-torch: pip install "
                                  "'medhorizon-tasks[zeroshot]'") from None
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                model_name, pretrained=pretrained, device=device, precision=_PRECISION[dtype])
        except (RuntimeError, ValueError, OSError) as exc:
            raise MedHorizonError(f"--encoder open_clip:{model_name}/{pretrained or ''}: {exc}") from None
        if pretrained is None and not model_name.startswith(("hf-hub:", "local-dir:")):
            print(f"[medhorizon-tasks surghi zeroshot] open_clip:{model_name}: no pretrained weights named, the model "
                  "is randomly initialised", file=sys.stderr)
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = open_clip.get_tokenizer(model_name)
        self.device, self.dtype = device, torch_dtype(dtype)
        self.name = f"open_clip:{model_name}" + (f"/{pretrained}" if pretrained else "")
        self._torch = torch

    @classmethod
    def from_spec(cls, spec: str, **kwargs) -> "OpenClipEncoder":
        """``ARCH/PRETRAINED`` (a tag or a checkpoint file), ``ARCH``, ``hf-hub:ORG/NAME`` or ``local-dir:PATH``
        (open_clip's own schemas: the model's config and weights from there)."""
        if spec.startswith(("hf-hub:", "local-dir:")):
            return cls(spec, None, **kwargs)
        arch, _, pretrained = spec.partition("/")
        if not arch:
            raise MedHorizonError(f"--encoder open_clip:{spec}: expected open_clip:ARCH/PRETRAINED, e.g. "
                                  "open_clip:ViT-B-16/openai")
        if pretrained and os.sep in pretrained and not os.path.isfile(pretrained):
            raise MedHorizonError(f"--encoder open_clip:{spec}: checkpoint file {pretrained} not found")
        return cls(arch, pretrained or None, **kwargs)

    def encode_text(self, texts: list[str]):
        with self._torch.no_grad():
            return self.model.encode_text(self.tokenizer(texts).to(self.device))

    def encode_images(self, frames: np.ndarray):
        batch = self._torch.stack([self.preprocess(im) for im in pil_images(frames)])
        with self._torch.no_grad():
            return self.model.encode_image(batch.to(self.device, self.dtype))
