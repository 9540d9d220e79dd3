"""A zero-shot probe encoder: a "dual encoder" that reads the synthetic SurgHiBench sample's visual code.

It tests the zero-shot pipeline (clip frames, prompts, similarity, argmax, outputs), not medicine:

* text: a prompt that names a class by its position in its dataset's lists, ``"phase 2"`` / ``"step 5"``
  (:func:`probe_prompts` writes a prompts file of them), becomes the unit vector of that position; a
  prompt that is a class name of the sample (what the default label template gives, so
  ``surghi zeroshot --encoder synthetic_probe --out DIR`` is a real run), the sum of the unit vectors of
  the positions that name has in the sample's datasets (``"closure"``: phase 2 of SynthTree and phase 3 of
  SynthDAG), so every class of a dataset gets its own direction; any other text, the zero vector (and a
  level whose prompts are all zero is refused by the runner: every frame would tie);
* image: the code drawn into a frame of the sample (``phase_index << 5 | step_index``, see
  :mod:`.surghi`) becomes the phase's unit vector plus the step's; a frame without a code, the zero
  vector. So the similarity (cosine, or negative Lorentz distance) is highest for the frame's own phase
  and step, and a probe that sees only coded frames of one segment scores 100% at both levels;
* ``kind="video"``: one embedding per clip, that of the clip's middle frame (position ``T // 2``).

Keyword arguments (``--encoder-arg``): ``kind`` (image / video), ``similarity`` (cosine / lorentz),
``curvature``, ``delay`` (seconds to sleep per call: lets a test interrupt a run).
"""

from __future__ import annotations

import re
import time

import numpy as np

from .surghi import HIERARCHIES
from .visual_code import decode_code

__all__ = ["ProbeEncoder", "probe_prompts", "DIM"]

PHASE_BITS, STEP_BITS = 3, 5
DIM = (1 << PHASE_BITS) + (1 << STEP_BITS)
_TEXT = re.compile(r"\b(phase|step) (\d+)\b")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _name_positions() -> dict[str, set[int]]:
    """Each class name of the sample -> the embedding dimensions of its positions (phase i, step j) in the
    datasets that have it."""
    out: dict[str, set[int]] = {}
    for h in HIERARCHIES.values():
        steps = list(dict.fromkeys(s for ss in h["phases"].values() for s in ss))
        for i, p in enumerate(h["phases"]):
            out.setdefault(_norm(p), set()).add(i)
        for j, s in enumerate(steps):
            out.setdefault(_norm(s), set()).add((1 << PHASE_BITS) + j)
    return out


_NAMES = _name_positions()


def probe_prompts(hierarchies: dict) -> dict:
    """A prompts file for :class:`ProbeEncoder` over ``hierarchies`` (``{dataset: {"phases": {phase: [steps]}}}``,
    as the sample's ``hierarchies.json``): two prompts per class (their similarities are averaged)."""
    out = {}
    for ds, h in hierarchies.items():
        phases = list(h["phases"])
        steps = list(dict.fromkeys(s for ss in h["phases"].values() for s in ss))
        out[ds] = {"phases": {p: [f"phase {i}", f"the phase {i}"] for i, p in enumerate(phases)},
                   "steps": {s: [f"step {j}", f"the step {j}"] for j, s in enumerate(steps)}}
    return out


class ProbeEncoder:
    name = "synthetic_probe"

    def __init__(self, *, kind: str = "image", similarity: str = "cosine", curvature: float = 1.0,
                 delay: float = 0.0, device: str = "cpu", dtype: str = "float32"):
        self.kind, self.similarity, self.curvature, self.delay = kind, similarity, float(curvature), float(delay)

    def _wait(self) -> None:
        if self.delay:
            time.sleep(self.delay)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        self._wait()
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            m = _TEXT.search(text)
            if m:
                out[i, int(m.group(2)) + (0 if m.group(1) == "phase" else 1 << PHASE_BITS)] = 1.0
            else:
                out[i, sorted(_NAMES.get(_norm(text), ()))] = 1.0
        return out

    def encode_images(self, frames: np.ndarray) -> np.ndarray:
        self._wait()
        out = np.zeros((len(frames), DIM), dtype=np.float32)
        for i, frame in enumerate(frames):
            code = decode_code(frame)
            if code is not None:
                payload = (code[0] << 2) | code[1]
                out[i, payload >> 5] = 1.0
                out[i, (1 << PHASE_BITS) + (payload & 31)] = 1.0
        return out

    def encode_clips(self, clips: np.ndarray) -> np.ndarray:
        return self.encode_images(clips[:, clips.shape[1] // 2])
