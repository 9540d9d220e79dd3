"""The pipeline probe models, registered through lmms-eval's ``lmms_eval.models`` entry point.

``--model medhorizon_random`` and ``--model medhorizon_needle``; their logic is
in :mod:`medhorizon_tasks.data.synthetic.probes`. Model args: ``seed`` (int, default 0),
``record_path`` (optional JSONL file; each request appends what the model
received: task, doc id, number of images and the SHA-256 of each image's
pixels — the test that the model sees exactly the planned frames reads it) and
``delay_s`` (seconds to wait per request, default 0: lets the interruption
tests kill a run in the middle). ``medhorizon_resume`` (resumable.py) wraps
any model to make a run resumable item by item.
"""

from __future__ import annotations

import json
import time

from lmms_eval.api.model import lmms
from lmms_eval.models.registry_v2 import ModelManifest
from tqdm import tqdm

from ...core.responses import response_failure
from ...data.synthetic import probes
from ...data.synthetic.probes import image_digest
from .bridges.base import answer_or_oom, visuals_ahead
from .model_args import CheckedModelArgs


def manifests() -> list[ModelManifest]:
    base = "medhorizon_tasks.adapters.lmms_eval.models"
    return [
        ModelManifest("medhorizon_random", simple_class_path=f"{base}.RandomProbe"),
        ModelManifest("medhorizon_needle", simple_class_path=f"{base}.NeedleProbe"),
        ModelManifest("medhorizon_resume", simple_class_path="medhorizon_tasks.adapters.lmms_eval.resumable.ResumableModel"),
    ]


class _Probe(CheckedModelArgs, lmms):
    def __init__(self, seed: int | str = 0, record_path: str = "", delay_s: float | str = 0, **kwargs) -> None:
        super().__init__()
        self.seed = int(seed)
        self.record_path = str(record_path or "")
        self.delay_s = float(delay_s)

    @property
    def device(self):
        import torch

        return torch.device("cpu")

    def answer(self, images: list, prompt: str) -> str:
        raise NotImplementedError

    def generate_until(self, requests) -> list[str]:
        out: list = [None] * len(requests)
        # as the bridges: the requests of a video together, the next requests' frames decoded meanwhile
        for i, visuals in tqdm(visuals_ahead(self, requests), total=len(requests), disable=self.rank != 0,
                               desc=f"{type(self).__name__}"):
            context, gen_kwargs, _, doc_id, task, _ = requests[i].args[:6]
            visuals = [v for v in (visuals or []) if v is not None]
            text = answer_or_oom(lambda: self.answer(visuals, context), visuals, f"doc {doc_id} of {task}")
            if self.delay_s:
                time.sleep(self.delay_s)
            if self.record_path:
                with open(self.record_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"task": task, "doc_id": doc_id, "rank": self.rank,
                                         "n_images": len(visuals), "prompt": context,
                                         "images": [image_digest(v) for v in visuals]}) + "\n")
            out[i] = text
            if response_failure(text) is None:
                self.cache_hook.add_partial("generate_until", (context, gen_kwargs), text)
        return out

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError(f"{type(self).__name__} answers generation tasks only")


class RandomProbe(_Probe):
    """A seeded uniform guess among the prompt's options; ignores the frames."""

    def answer(self, images, prompt):
        return probes.random_answer(prompt, self.seed)


class NeedleProbe(_Probe):
    """Reads the synthetic benchmark's visual code from the frames it is given (a pipeline probe)."""

    def answer(self, images, prompt):
        return probes.needle_answer(images, prompt, self.seed)


