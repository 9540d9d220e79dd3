"""Tiny, randomly initialised dual encoders built offline, and encoders that break the interface.

* :func:`build_hf_clip`: a transformers ``CLIPModel`` (2-layer, 32-wide towers, 32 px images, patch 8) with a
  ``CLIPTokenizer`` over one token per byte-level character (a vocabulary of the 256 byte symbols, the same
  with ``</w>``, and the two specials; no merge), saved with ``save_pretrained``;
* :func:`register_open_clip`: an open_clip model config of the same size, registered under a name
  (``open_clip.add_model_config``); its tokenizer is the one that ships in the wheel;
* :class:`FrameProjection`: an image encoder whose embedding of a frame is a fixed random projection of its
  8x8 thumbnail (deterministic, so a test can recompute any similarity by hand);
  (``scale`` multiplies every embedding: unnormalised encoders give norms in the hundreds);
* :class:`BrokenEncoder`: returns NaN or the wrong shape where told to, or embeddings no similarity can score.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OPEN_CLIP_NAME = "TinyCLIP-medhorizon-test"
OPEN_CLIP_CFG = {"embed_dim": 16,
                 "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
                 "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2}}


def build_hf_clip(folder: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import pre_tokenizers
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    chars = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab.update({"<|startoftext|>": len(vocab), "<|endoftext|>": len(vocab) + 1})
    tok = CLIPTokenizer(vocab=vocab, merges=[])
    cfg = CLIPConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77,
                     "bos_token_id": vocab["<|startoftext|>"], "eos_token_id": vocab["<|endoftext|>"],
                     "pad_token_id": vocab["<|endoftext|>"]},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8},
        projection_dim=16)
    torch.manual_seed(seed)
    CLIPModel(cfg).eval().save_pretrained(folder)
    image = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image, tokenizer=tok).save_pretrained(folder)
    return folder


def register_open_clip(folder: Path) -> str:
    import open_clip

    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{OPEN_CLIP_NAME}.json").write_text(json.dumps(OPEN_CLIP_CFG))
    open_clip.add_model_config(folder)
    return OPEN_CLIP_NAME


def build_open_clip_dir(folder: Path, seed: int = 0) -> Path:
    """A tiny random open_clip model saved in open_clip's own folder layout (``open_clip_config.json`` with
    ``model_cfg`` and ``preprocess_cfg``, weights in ``open_clip_pytorch_model.bin``): what a Hub snapshot of
    an open_clip model holds, read offline with ``open_clip:local-dir:FOLDER``."""
    import open_clip
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    register_open_clip(folder / "_config")
    torch.manual_seed(seed)
    model = open_clip.create_model(OPEN_CLIP_NAME)
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    (folder / "open_clip_config.json").write_text(json.dumps({
        "model_cfg": OPEN_CLIP_CFG,
        "preprocess_cfg": {"mean": [0.48145466, 0.4578275, 0.40821073], "std": [0.26862954, 0.26130258, 0.27577711],
                           "interpolation": "bicubic", "resize_mode": "shortest"}}))
    return folder


class FrameProjection:
    """``kind="image"``: a frame's embedding is ``P @ thumbnail`` (its 8x8 grey thumbnail, a fixed ``P``); a text's,
    a fixed random vector per text."""

    kind = "image"
    name = "frame-projection"

    def __init__(self, *, dim: int = 12, seed: int = 3, scale: float = 1.0, similarity: str = "cosine",
                 device: str = "cpu", dtype: str = "float32"):
        rng = np.random.default_rng(seed)
        self.P = rng.standard_normal((dim, 64))
        self.dim, self.seed, self.scale, self.similarity = dim, seed, float(scale), similarity
        self.calls: list[int] = []

    def thumbnail(self, frame: np.ndarray) -> np.ndarray:
        grey = frame.astype(np.float64).mean(axis=2)
        h, w = grey.shape
        return np.array([[grey[i * h // 8:(i + 1) * h // 8, j * w // 8:(j + 1) * w // 8].mean() for j in range(8)]
                         for i in range(8)]).ravel() / 255.0

    def encode_text(self, texts):
        return self.scale * np.stack([np.random.default_rng([self.seed, *map(ord, t)]).standard_normal(self.dim)
                                      for t in texts])

    def encode_images(self, frames):
        self.calls.append(len(frames))
        return self.scale * np.stack([self.P @ self.thumbnail(f) for f in frames])


class BrokenEncoder:
    """An image encoder that misbehaves as ``fault`` says: ``nan_text`` (NaN for the text ``at``), ``nan_frame``
    (NaN for every frame from the ``at``-th call on), ``shape`` (one row too few), ``dim`` (image embeddings of
    another size than the texts'), ``no_method`` (a video encoder without encode_clips), ``huge`` (finite frame
    embeddings whose norm overflows: no similarity is finite), ``blank`` (every frame the zero vector: every
    class scores the same); its texts embed to distinct vectors."""

    def __init__(self, *, fault: str, at: str = "", device: str = "cpu", dtype: str = "float32"):
        self.fault, self.at = fault, at
        self.kind = "video" if fault == "no_method" else "image"
        self.similarity = "lorentz" if fault == "huge" else "cosine"  # the case; blank frames tie in cosine

    def encode_text(self, texts):
        out = np.stack([1 + np.random.default_rng([*map(ord, t)]).random(4) for t in texts])
        if self.fault == "nan_text":
            for i, t in enumerate(texts):
                if t == self.at:
                    out[i, 0] = np.nan
        return out

    def encode_images(self, frames):
        n = len(frames)
        if self.fault == "shape":
            return np.ones((n - 1, 4))
        if self.fault == "dim":
            return np.ones((n, 5))
        out = np.ones((n, 4))
        if self.fault == "huge":
            return out * 1.5e308
        if self.fault == "blank":
            return out * 0
        if self.fault == "nan_frame":
            out[:, 1] = np.nan
        return out


def build_hf_blip_itm(folder: Path, seed: int = 0) -> Path:
    """A transformers ``BlipForImageTextRetrieval`` (2-layer, 32-wide towers, 32 px images, patch 8) with a
    ``BertTokenizer`` over a vocabulary of single characters, saved with ``save_pretrained``."""
    import torch
    from transformers import BertTokenizer, BlipConfig, BlipForImageTextRetrieval, BlipImageProcessor, BlipProcessor

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz0123456789#[]?.,:;'-()"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizer(str(folder / "vocab.txt"))
    cfg = BlipConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "intermediate_size": 64, "max_position_embeddings": 256, "encoder_hidden_size": 32,
                     "pad_token_id": 0, "bos_token_id": 2, "sep_token_id": 3, "eos_token_id": 3},
        vision_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                       "image_size": 32, "patch_size": 8},
        projection_dim=16, image_text_hidden_size=16)
    torch.manual_seed(seed)
    BlipForImageTextRetrieval(cfg).eval().save_pretrained(folder)
    BlipProcessor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}),
                  tokenizer=tok).save_pretrained(folder)
    return folder


def build_hf_blip2_itm(folder: Path, seed: int = 0) -> Path:
    """A transformers ``Blip2ForImageTextRetrieval`` (WFS-SB's default scorer's class: 1-2 layer, 32-wide vision
    tower, Q-Former and 4 query tokens, 32 px images, patch 8) with a ``BertTokenizer`` over single characters
    and a ``Blip2Processor``, saved with ``save_pretrained``."""
    import torch
    from transformers import (
        BertTokenizer,
        Blip2Config,
        Blip2ForImageTextRetrieval,
        Blip2Processor,
        BlipImageProcessor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz0123456789#[]?.,:;'-()"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizer(str(folder / "vocab.txt"))
    cfg = Blip2Config(
        vision_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                       "image_size": 32, "patch_size": 8},
        qformer_config={"vocab_size": len(vocab) + 1, "hidden_size": 32, "num_hidden_layers": 2,
                        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 256,
                        "encoder_hidden_size": 32, "pad_token_id": 0, "cross_attention_frequency": 1,
                        "use_qformer_text_input": True},
        text_config={"model_type": "opt", "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "ffn_dim": 32, "word_embed_proj_dim": 16},
        num_query_tokens=4, image_text_hidden_size=16)
    torch.manual_seed(seed)
    model = Blip2ForImageTextRetrieval(cfg).eval()
    with torch.no_grad():  # transformers' init leaves this tiny tower's weights near 0: frames would all look alike
        for w in model.parameters():
            if w.dim() > 1:
                w.normal_(0.0, 0.2)
    model.save_pretrained(folder)
    Blip2Processor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}),
                   tokenizer=tok).save_pretrained(folder)
    return folder
