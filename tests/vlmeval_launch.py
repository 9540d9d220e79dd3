"""``python tests/vlmeval_launch.py <launcher arguments>``: the VLMEvalKit launcher with two test models added.

Both are reachable from ``--config`` only (VLMEvalKit resolves a ``"class"`` in ``vlmeval.vlm``):

- ``ReplayModel`` (``"outputs"``: a JSON file holding a list of texts): the k-th prompt of a dataset is
  answered with text k (cyclically), so chosen raw outputs go through VLMEvalKit's prediction file and
  ``evaluate()``. One process answers a dataset's rows in order, so row k got text k.
- ``CrashModel`` (``"crash_on"``: dataset names): raises on those datasets and answers "A" elsewhere.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

import vlmeval.vlm
from vlmeval.vlm.base import BaseModel

from medhorizon_tasks.adapters.vlmeval.launch import run_cli


class ReplayModel(BaseModel):
    INTERLEAVE = True

    def __init__(self, outputs: str = "", **kwargs):
        super().__init__()
        with open(outputs, encoding="utf-8") as fh:
            self.outputs = json.load(fh)
        self.seen = Counter()

    def generate_inner(self, message, dataset=None):
        k = self.seen[dataset]
        self.seen[dataset] += 1
        return self.outputs[k % len(self.outputs)]


class CrashModel(BaseModel):
    INTERLEAVE = True

    def __init__(self, crash_on=(), **kwargs):
        super().__init__()
        self.crash_on = set(crash_on)

    def generate_inner(self, message, dataset=None):
        if dataset in self.crash_on:
            raise RuntimeError(f"test model crashed on {dataset}")
        return "A"


vlmeval.vlm.ReplayModel = ReplayModel
vlmeval.vlm.CrashModel = CrashModel

if __name__ == "__main__":
    sys.exit(run_cli(sys.argv[1:]))
