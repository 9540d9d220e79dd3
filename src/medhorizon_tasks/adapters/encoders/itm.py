"""An image-text matching head as a relevance scorer: ``select --scorer hf-itm:ID_OR_FOLDER`` (BLIP, BLIP-2 ITM).

AKS's default relevance is BLIP's image-text matching probability (``Salesforce/blip-itm-large-coco``), and
WFS-SB's is BLIP-2's (``Salesforce/blip2-itm-vit-g``, its ``preprocess/extract.py`` default): the question
and a frame go through the matching head together, and the softmax's "match" probability is the frame's
relevance (:attr:`ItmScorer.relevance_scale` = ``"probability"``, so WFS-SB takes it raw). Unlike a dual
encoder's cosine, that needs one forward pass per frame-question pair (:meth:`ItmScorer.score_pairs`); each
frame is still decoded once per video. The checkpoint's config says which model it is: a ``blip-2`` config
loads transformers' ``Blip2ForImageTextRetrieval``, any other ``BlipForImageTextRetrieval``.

Frame-to-frame similarity (WFS-SB's MMR, ViLAMP's suppression) compares :meth:`ItmScorer.encode_images`:
for BLIP, the frame's image-text contrastive embedding; for BLIP-2, the vision tower's class token, as
WFS-SB's extractor stores it (``image_embeds[:, 0, :]``).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import MedHorizonError
from .torch_io import pil_images, torch_dtype

__all__ = ["ItmScorer"]


class ItmScorer:
    kind = "image"
    relevance_scale = "probability"  # a softmax's match probability, in [0, 1]

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "float32", batch_pairs: int = 64):
        try:
            import torch
            from transformers import (
                AutoConfig,
                AutoProcessor,
                Blip2ForImageTextRetrieval,
                BlipForImageTextRetrieval,
            )
        except ImportError:
            raise MedHorizonError("--scorer hf-itm:... needs transformers and torch") from None
        try:
            self.blip2 = getattr(AutoConfig.from_pretrained(name), "model_type", "") == "blip-2"
            cls = Blip2ForImageTextRetrieval if self.blip2 else BlipForImageTextRetrieval
            self.model = cls.from_pretrained(name, dtype=torch_dtype(dtype)).to(device).eval()
            self.processor = AutoProcessor.from_pretrained(name)
        except (OSError, ValueError) as exc:
            raise MedHorizonError(f"--scorer hf-itm:{name}: {exc}") from None
        self.device, self.dtype, self.name, self.batch_pairs = device, torch_dtype(dtype), f"hf-itm:{name}", batch_pairs
        self._torch = torch

    def _pixels(self, frames: np.ndarray):
        return self.processor(images=pil_images(frames), return_tensors="pt")["pixel_values"].to(self.device,
                                                                                                 self.dtype)

    def encode_images(self, frames: np.ndarray) -> np.ndarray:
        """Frame embeddings for frame-to-frame similarity (see the module doc)."""
        with self._torch.no_grad():
            cls = self.model.vision_model(pixel_values=self._pixels(frames))[0][:, 0, :]
            if self.blip2:
                return cls.float().cpu().numpy()
            return self.model.vision_proj(cls).float().cpu().numpy()

    def _text(self, texts: list[str]):
        """Token ids and mask of the texts; for a BLIP-2 checkpoint whose config has an image token, the query
        tokens' placeholders first, as its processor adds them (the model strips them again)."""
        torch = self._torch
        tok = self.processor.tokenizer(list(texts), return_tensors="pt", padding=True, truncation=True)
        ids, mask = tok["input_ids"], tok["attention_mask"]
        image_token = getattr(self.model.config, "image_token_index", None) if self.blip2 else None
        if image_token is not None:
            n = int(self.model.config.num_query_tokens)
            ids = torch.cat([torch.full((len(texts), n), int(image_token), dtype=ids.dtype), ids], dim=1)
            mask = torch.cat([torch.ones((len(texts), n), dtype=mask.dtype), mask], dim=1)
        return ids, mask

    def score_pairs(self, frames: np.ndarray, texts: list[str]) -> np.ndarray:
        """``(len(frames), len(texts))``: the matching head's probability that each frame matches each text."""
        torch = self._torch
        pixels = self._pixels(frames)
        all_ids, all_mask = self._text(texts)
        n, t = len(frames), len(texts)
        out = np.empty((n, t))
        with torch.no_grad():
            for j in range(t):  # one text against a batch of frames at a time
                for s in range(0, n, self.batch_pairs):
                    px = pixels[s:s + self.batch_pairs]
                    ids = all_ids[j:j + 1].expand(len(px), -1).to(self.device)
                    mask = all_mask[j:j + 1].expand(len(px), -1).to(self.device)
                    if self.blip2:
                        logits = self.model(pixel_values=px, input_ids=ids, attention_mask=mask,
                                            use_image_text_matching_head=True).logits_per_image
                    else:
                        logits = self.model(input_ids=ids, attention_mask=mask, pixel_values=px,
                                            use_itm_head=True)[0]
                    out[s:s + len(px), j] = torch.softmax(logits.float(), dim=1)[:, 1].cpu().numpy()
        return out
