"""Shared by the recording stand-ins of remote code (tests/tiny_remote_code.py copies this folder's files into
each tiny model folder, where transformers' remote-code loader imports them as ``transformers_modules``).

Every call appends one JSON line to the file named by ``MEDHORIZON_REMOTE_SPY``: what the model received.
Nothing here exists in the package itself.
"""

import hashlib
import json
import os

import numpy as np
import torch
from transformers import PretrainedConfig, PreTrainedModel


def frame_facts(frames) -> dict:
    """Count, shape and a digest of each frame (PIL images or an (n, h, w, 3) uint8 array)."""
    arrays = [np.ascontiguousarray(np.asarray(f), dtype=np.uint8) for f in frames]
    return {"count": len(arrays), "shapes": [list(a.shape) for a in arrays],
            "sha1": [hashlib.sha1(a.tobytes()).hexdigest() for a in arrays]}


def record(event: str, **data) -> None:
    path = os.environ.get("MEDHORIZON_REMOTE_SPY")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, **data}, default=repr) + "\n")


class RecordingConfig(PretrainedConfig):
    """The folder's config; ``answer`` is the letter every stand-in answers."""

    model_type = "medhorizon_recording"


class RecordingModel(PreTrainedModel):
    """A model with one weight (loaded from the folder's safetensors), so ``from_pretrained`` runs for real."""

    config_class = RecordingConfig
    base_model_prefix = "recording"
    _no_split_modules: list = []

    def __init__(self, config):
        super().__init__(config)
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.post_init()

    def _init_weights(self, module):
        pass
