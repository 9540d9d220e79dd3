"""Test-only spy, loaded by any Python process that has this folder on PYTHONPATH.

When ``MEDHORIZON_GENERATE_SPY`` names a file, every ``GenerationMixin.generate``
call appends one JSON line there: each tensor argument's shape and dtype, and
its values when small (``input_ids``, ``video_grid_thw``, ``second_per_grid_ts``,
...). Nothing of this exists in the package itself.

When ``MEDHORIZON_SPY_CUDA_COUNT_FOR`` names modules (comma-separated), ``torch.cuda.device_count()`` called from
those modules' own code answers 1: lmms-eval's ``videochat_flash`` wrapper asserts a GPU before it loads the
model, which a CPU test run of that wrapper has not (every other caller still gets the real count).
"""

import json
import os
import sys

_CUDA_FOR = {m for m in os.environ.get("MEDHORIZON_SPY_CUDA_COUNT_FOR", "").split(",") if m}
if _CUDA_FOR:
    import torch

    _device_count = torch.cuda.device_count

    def device_count() -> int:
        if sys._getframe(1).f_globals.get("__name__") in _CUDA_FOR:
            return 1
        return _device_count()

    torch.cuda.device_count = device_count

_PATH = os.environ.get("MEDHORIZON_GENERATE_SPY")
_MAX_VALUES = 200_000

if _PATH:
    from transformers.generation.utils import GenerationMixin

    _generate = GenerationMixin.generate

    def _describe(value):
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            out = {"shape": list(value.shape), "dtype": str(value.dtype)}
            if value.numel() <= _MAX_VALUES:
                out["values"] = value.detach().cpu().float().tolist() if value.is_floating_point() \
                    else value.detach().cpu().tolist()
            return out
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        return repr(value)[:200]

    def generate(self, *args, **kwargs):
        record = {"model": type(self).__name__, "args": [_describe(a) for a in args],
                  "kwargs": {k: _describe(v) for k, v in kwargs.items()}}
        with open(_PATH, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        return _generate(self, *args, **kwargs)

    GenerationMixin.generate = generate
