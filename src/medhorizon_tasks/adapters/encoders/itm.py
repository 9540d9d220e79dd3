"""An image-text matching head as a relevance scorer: ``select --scorer hf-itm:ID_OR_FOLDER`` (BLIP ITM).

AKS's default relevance is BLIP's image-text matching probability ("large" by default), and so is
WFS-SB's option of BLIP ITM: the question and a frame go through the matching head together, and the
softmax's "match" probability is the frame's relevance. Unlike a dual encoder's cosine, that needs one
forward pass per frame-question pair (:meth:`ItmScorer.score_pairs`); each frame is still decoded once per
video. Frame-to-frame similarity (WFS-SB's MMR, ViLAMP's suppression) uses BLIP's image-text contrastive
embedding of the frame (:meth:`ItmScorer.encode_images`). transformers' ``BlipForImageTextRetrieval``
(e.g. ``Salesforce/blip-itm-large-coco``); BLIP-2's matching head is not wired here.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import MedHorizonError
from .torch_io import pil_images, torch_dtype

__all__ = ["ItmScorer"]


class ItmScorer:
    kind = "image"

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "float32", batch_pairs: int = 64):
        try:
            import torch
            from transformers import AutoProcessor, BlipForImageTextRetrieval
        except ImportError:
            raise MedHorizonError("--scorer hf-itm:... needs transformers and torch") from None
        try:
            self.model = BlipForImageTextRetrieval.from_pretrained(name, dtype=torch_dtype(dtype)).to(device).eval()
            self.processor = AutoProcessor.from_pretrained(name)
        except (OSError, ValueError) as exc:
            raise MedHorizonError(f"--scorer hf-itm:{name}: {exc}") from None
        self.device, self.dtype, self.name, self.batch_pairs = device, torch_dtype(dtype), f"hf-itm:{name}", batch_pairs
        self._torch = torch

    def _pixels(self, frames: np.ndarray):
        return self.processor(images=pil_images(frames), return_tensors="pt")["pixel_values"].to(self.device,
                                                                                                 self.dtype)

    def encode_images(self, frames: np.ndarray) -> np.ndarray:
        """The frames' contrastive (ITC) embeddings, for frame-to-frame similarity."""
        with self._torch.no_grad():
            cls = self.model.vision_model(pixel_values=self._pixels(frames))[0][:, 0, :]
            return self.model.vision_proj(cls).float().cpu().numpy()

    def score_pairs(self, frames: np.ndarray, texts: list[str]) -> np.ndarray:
        """``(len(frames), len(texts))``: the matching head's probability that each frame matches each text."""
        torch = self._torch
        pixels = self._pixels(frames)
        tok = self.processor.tokenizer(list(texts), return_tensors="pt", padding=True, truncation=True)
        n, t = len(frames), len(texts)
        out = np.empty((n, t))
        with torch.no_grad():
            for j in range(t):  # one text against a batch of frames at a time
                for s in range(0, n, self.batch_pairs):
                    px = pixels[s:s + self.batch_pairs]
                    ids = tok["input_ids"][j:j + 1].expand(len(px), -1).to(self.device)
                    mask = tok["attention_mask"][j:j + 1].expand(len(px), -1).to(self.device)
                    logits = self.model(input_ids=ids, attention_mask=mask, pixel_values=px, use_itm_head=True)[0]
                    out[s:s + len(px), j] = torch.softmax(logits.float(), dim=1)[:, 1].cpu().numpy()
        return out
