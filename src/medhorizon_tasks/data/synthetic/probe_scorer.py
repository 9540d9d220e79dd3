"""A relevance probe for the synthetic MedHorizon benchmark: a "dual encoder" that reads the visual code.

It tests the selection pipeline (candidates, relevance, selectors, recall), not medicine. Every question
of the synthetic benchmark ends with ``[probe #<tag>]`` and its evidence frames carry the code
``(tag, letter)`` (:mod:`.visual_code`), so:

* text: a text naming ``[probe #N`` becomes the unit vector of position N (of 64 tags); any other
  text, the zero vector;
* image: a frame carrying a code becomes the unit vector of its tag; a frame without one (background),
  the zero vector.

The cosine of a question and a frame is therefore 1 on the question's own evidence frames and 0
everywhere else (another question's evidence included), and two frames are 1-similar exactly when they
carry the same tag. Registered as ``synthetic_probe`` under the entry-point group
``medhorizon_tasks.relevance_scorers`` (``medhorizon-tasks select --scorer synthetic_probe``). Keyword
argument (``--scorer-arg``): ``delay``, seconds to sleep per ``encode_text`` call (once per video; lets a
test interrupt a run).
"""

from __future__ import annotations

import re
import time

import numpy as np

from .visual_code import decode_code

__all__ = ["TagProbe", "TAGS"]

TAGS = 64
_TAG = re.compile(r"\[probe #(\d+)")


class TagProbe:
    kind = "image"
    name = "synthetic_probe"

    def __init__(self, *, delay: float = 0.0, device: str = "cpu", dtype: str = "float32"):
        self.device, self.dtype, self.delay = device, dtype, float(delay)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        if self.delay:
            time.sleep(self.delay)
        out = np.zeros((len(texts), TAGS), dtype=np.float32)
        for i, text in enumerate(texts):
            m = _TAG.search(text)
            if m and int(m.group(1)) < TAGS:
                out[i, int(m.group(1))] = 1.0
        return out

    def encode_images(self, frames: np.ndarray) -> np.ndarray:
        out = np.zeros((len(frames), TAGS), dtype=np.float32)
        for i, frame in enumerate(frames):
            code = decode_code(frame)
            if code is not None:
                out[i, code[0]] = 1.0
        return out
