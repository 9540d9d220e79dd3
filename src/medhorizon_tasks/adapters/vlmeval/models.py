"""The pipeline probe models as VLMEvalKit models: ``--model medhorizon_random`` / ``--model medhorizon_needle``.

Their logic is :mod:`medhorizon_tasks.data.synthetic.probes`, the same functions the lmms-eval
probes call, so both frameworks' probes answer identically for the same prompt
and pixels. The needle probe reads the frames from the image files it is given,
in the order given. Options (``--config`` model entries, class
``MedHorizonRandomProbe`` / ``MedHorizonNeedleProbe``): ``seed`` (default 0) and
``record_path`` (a JSONL file; each call appends the dataset, the number of
images, the SHA-256 of each image's pixels and the prompt -- what the test that
the model sees exactly the planned frames reads).
"""

from __future__ import annotations

import json
import os

import numpy as np
from vlmeval.vlm.base import BaseModel

from ...data.synthetic import probes
from ...data.synthetic.probes import image_digest

__all__ = ["RandomProbe", "NeedleProbe", "MODELS"]


class _Probe(BaseModel):
    INTERLEAVE = True
    VIDEO_LLM = False

    def __init__(self, seed: int | str = 0, record_path: str = "", **kwargs):
        super().__init__()
        self.seed = int(seed)
        self.record_path = str(record_path or "")

    def answer(self, images: list[np.ndarray], prompt: str) -> str:
        raise NotImplementedError

    def generate_inner(self, message, dataset=None):
        from PIL import Image

        images = []
        for part in message:
            if part["type"] == "image":
                with Image.open(part["value"]) as im:
                    images.append(np.asarray(im.convert("RGB")))
        prompt = "\n".join(part["value"] for part in message if part["type"] == "text")
        text = self.answer(images, prompt)
        if self.record_path:
            rec = {"dataset": dataset, "rank": int(os.environ.get("RANK", 0)), "n_images": len(images),
                   "images": [image_digest(a) for a in images], "prompt": prompt}
            with open(self.record_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
        return text


class RandomProbe(_Probe):
    """A seeded uniform guess among the prompt's options; ignores the frames."""

    def answer(self, images, prompt):
        return probes.random_answer(prompt, self.seed)


class NeedleProbe(_Probe):
    """Reads the synthetic benchmark's visual code from the frames it is given (a pipeline probe)."""

    def answer(self, images, prompt):
        return probes.needle_answer(images, prompt, self.seed)


#: ``--model`` name -> class; the classes are also reachable from ``--config`` under their class names.
MODELS = {"medhorizon_random": RandomProbe, "medhorizon_needle": NeedleProbe}
CLASS_NAMES = {RandomProbe: "MedHorizonRandomProbe", NeedleProbe: "MedHorizonNeedleProbe"}
