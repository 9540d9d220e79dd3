"""What the torch-based encoders share: the dtype by name, and RGB arrays as PIL images."""

from __future__ import annotations

import numpy as np


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def pil_images(frames: np.ndarray) -> list:
    """``(N, H, W, 3)`` uint8 RGB -> N PIL images (what the models' own preprocessing takes)."""
    from PIL import Image

    return [Image.fromarray(np.ascontiguousarray(f)) for f in frames]


def features(out):
    """A ``get_*_features`` result as a tensor: transformers 5 returns an output object whose
    ``pooler_output`` holds the projected embeddings; earlier versions, the tensor itself."""
    return out if hasattr(out, "detach") else out.pooler_output
