"""transformers dual encoders (``CLIPModel``, ``SiglipModel``, ...) as zero-shot image encoders.

``AutoModel`` + ``AutoProcessor`` from a Hub id or a local folder; ``get_text_features`` /
``get_image_features``. SigLIP's text tower was trained on texts padded to its full length, so its
texts are padded so here too. Similarity: cosine.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import MedHorizonError
from .torch_io import features, pil_images, torch_dtype


class HFEncoder:
    kind = "image"
    similarity = "cosine"

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "float32"):
        try:
            import torch
            from transformers import AutoModel, AutoProcessor
        except ImportError:
            raise MedHorizonError("--encoder hf:... needs transformers and torch") from None
        try:
            self.model = AutoModel.from_pretrained(name, dtype=torch_dtype(dtype)).to(device).eval()
            self.processor = AutoProcessor.from_pretrained(name)
        except (OSError, ValueError) as exc:
            raise MedHorizonError(f"--encoder hf:{name}: {exc}") from None
        for method in ("get_text_features", "get_image_features"):
            if not callable(getattr(self.model, method, None)):
                raise MedHorizonError(f"--encoder hf:{name}: {type(self.model).__name__} has no {method} (a dual "
                                      "encoder such as CLIPModel or SiglipModel is needed)")
        self.padding = "max_length" if "siglip" in str(getattr(self.model.config, "model_type", "")) else True
        self.device, self.dtype, self.name = device, torch_dtype(dtype), f"hf:{name}"
        self._torch = torch

    def encode_text(self, texts: list[str]):
        inputs = self.processor(text=list(texts), return_tensors="pt", padding=self.padding, truncation=True)
        with self._torch.no_grad():
            return features(self.model.get_text_features(**inputs.to(self.device)))

    def encode_images(self, frames: np.ndarray):
        pixels = self.processor(images=pil_images(frames), return_tensors="pt")["pixel_values"]
        with self._torch.no_grad():
            return features(self.model.get_image_features(pixel_values=pixels.to(self.device, self.dtype)))
