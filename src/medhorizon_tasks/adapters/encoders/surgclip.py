"""SurgCLIP(β) as a zero-shot video encoder: ``surghi zeroshot --encoder surgclip --encoder-arg checkpoint=PATH``.

SurgCLIP (Perez et al., SurgLaVi) is a dual encoder: a TimeSformer over T
frames (divided space-time attention) and BERT-base, each projected to a
shared space and compared by cosine similarity. SurgHiBench's SurgCLIP*(β) is
the authors' re-implementation of it (section 3.3), whose weights are not
released: this encoder runs the released SurgCLIP(β) weights, so its numbers
will not match SurgHiBench's Table 2 exactly.

The model code is the ``surgclip`` package's (0.1.0, MIT; ``pip install
medhorizon-tasks[surgclip]``): ``SurgCLIP.encode_vision`` on (B, T, 3, 224, 224)
frames normalised with mean = std = 0.5, ``vision_proj``; ``encode_text`` on
BERT tokens (77, padded), ``text_proj``. Its package ``__init__`` imports a
BERT tokenizer that transformers 5 no longer supports, so only its model and
config modules are imported here (the tokenizer is transformers' own
``BertTokenizerFast`` over the same BERT folder). Its video tower gives one
pooled embedding per frame and its similarity averages the per-frame cosines;
the clip embedding here is the mean of the normalised per-frame embeddings,
whose cosine with a text ranks the classes exactly as that average does.

``--encoder-arg``: ``checkpoint`` (the released ``surgclip_beta.pth``, a local
file; nothing is downloaded), ``bert`` (a local BERT folder with its vocab,
default ``bert-base-uncased`` from the Hugging Face cache), ``num_frames``
(T, default 16, the protocol's), and, for other configurations,
``vision_config`` / ``text_config`` (JSON files), ``image_res`` (224),
``embed_dim`` (256); ``random_init=true`` builds the model without a
checkpoint (tests; said on stderr).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types

import numpy as np

from ...core.errors import MedHorizonError
from .torch_io import torch_dtype

__all__ = ["SurgCLIPEncoder", "surgclip_modules"]

MEAN = STD = 0.5  # surgclip.transforms: Normalize((0.5,) * 3, (0.5,) * 3)
MAX_TEXT_TOKENS = 77  # surgclip.tokenize(max_length=77, padding="max_length")


def surgclip_modules():
    """``(SurgCLIP, get_config)`` from the installed ``surgclip`` package without running its ``__init__``."""
    if "surgclip" not in sys.modules:
        spec = importlib.util.find_spec("surgclip")
        if spec is None or not spec.submodule_search_locations:
            raise MedHorizonError("--encoder surgclip needs the surgclip package: pip install "
                                  "'medhorizon-tasks[surgclip]' (or pip install surgclip==0.1.0)")
        package = types.ModuleType("surgclip")  # its model code only: the package __init__ fails on transformers 5
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["surgclip"] = package
    from surgclip.config import get_config
    from surgclip.model import SurgCLIP

    return SurgCLIP, get_config


class SurgCLIPEncoder:
    kind = "video"
    similarity = "cosine"

    def __init__(self, *, device: str = "cpu", dtype: str = "float32", checkpoint: str | None = None,
                 bert: str = "bert-base-uncased", num_frames: int = 16, vision_config: str | None = None,
                 text_config: str | None = None, image_res: int = 224, embed_dim: int = 256,
                 random_init: bool = False):
        import torch
        from transformers import BertTokenizerFast

        if not checkpoint and not random_init:
            raise MedHorizonError("--encoder surgclip: give --encoder-arg checkpoint=PATH (the released "
                                  "surgclip_beta.pth; nothing is downloaded)")
        SurgCLIP, get_config = surgclip_modules()
        model_cfg: dict = {"embed_dim": int(embed_dim), "text_encoder": {"pretrained": str(bert)}}
        if vision_config:
            model_cfg["vision_encoder"] = {"config": str(vision_config)}
        if text_config:
            model_cfg["text_encoder"]["config"] = str(text_config)
        config = get_config("SurgCLIP-B", overrides={"device": device, "num_frames": int(num_frames),
                                                     "inputs": {"image_res": int(image_res)}, "model": model_cfg})
        for part in ("vision_encoder", "text_encoder"):  # the towers' widths are their configs'
            cfg_path = getattr(config.model, part).config
            with open(cfg_path, encoding="utf-8") as f:
                width = json.load(f).get("embed_dim" if part == "vision_encoder" else "hidden_size")
            getattr(config.model, part).d_model = int(width)
        try:
            self.tokenizer = BertTokenizerFast.from_pretrained(str(bert))
            model = SurgCLIP(config=config, tokenizer=None, is_pretrain=False)
        except OSError as exc:
            raise MedHorizonError(f"--encoder surgclip: BERT {bert!r} could not be loaded ({exc}); give "
                                  "--encoder-arg bert=FOLDER") from None
        if checkpoint:
            try:
                state = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
            except (OSError, RuntimeError) as exc:
                raise MedHorizonError(f"--encoder surgclip: checkpoint {checkpoint}: {exc}") from None
            state = state.get("model", state) if isinstance(state, dict) else state
            missing, unexpected = model.load_state_dict(state, strict=False)
            if len(missing) == len(model.state_dict()):
                raise MedHorizonError(f"--encoder surgclip: {checkpoint} holds none of SurgCLIP's weights")
            for what, keys in (("missing", missing), ("unexpected", unexpected)):
                if keys:
                    print(f"surgclip: {len(keys)} {what} keys in {checkpoint} (first: {', '.join(keys[:3])})",
                          file=sys.stderr)
        else:
            print("surgclip: random_init=true, no checkpoint: a randomly initialised model", file=sys.stderr)
        self.model = model.to(device=device, dtype=torch_dtype(dtype)).eval()
        self.device, self.dtype, self.image_res = device, torch_dtype(dtype), int(image_res)
        self.name = f"surgclip:{checkpoint or 'random'}"
        self._torch = torch

    def encode_text(self, texts: list[str]):
        torch = self._torch
        tokens = self.tokenizer(list(texts), padding="max_length", truncation=True, max_length=MAX_TEXT_TOKENS,
                                return_tensors="pt").to(self.device)
        with torch.no_grad():
            _, pooled = self.model.encode_text(tokens)
            return self.model.text_proj(pooled)

    def pixels(self, clips: np.ndarray):
        """(N, T, H, W, 3) uint8 -> (N, T, 3, R, R) float, bicubic to ``image_res``, (x - 0.5) / 0.5."""
        torch = self._torch
        n, t = clips.shape[:2]
        x = torch.from_numpy(np.ascontiguousarray(clips)).reshape(n * t, *clips.shape[2:]).permute(0, 3, 1, 2)
        x = torch.nn.functional.interpolate(x.float() / 255.0, size=(self.image_res, self.image_res),
                                            mode="bicubic", align_corners=False, antialias=True).clamp(0, 1)
        return ((x - MEAN) / STD).reshape(n, t, 3, self.image_res, self.image_res)

    def encode_clips(self, clips: np.ndarray):
        torch = self._torch
        with torch.no_grad():
            _, pooled = self.model.encode_vision(self.pixels(clips).to(self.device, self.dtype))
            per_frame = torch.nn.functional.normalize(self.model.vision_proj(pooled), dim=-1)
            return per_frame.mean(dim=1) if per_frame.dim() == 3 else per_frame
