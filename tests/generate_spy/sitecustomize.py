"""Test-only spy, loaded by any Python process that has this folder on PYTHONPATH.

When ``MEDHORIZON_GENERATE_SPY`` names a file, every ``GenerationMixin.generate``
call appends one JSON line there: each tensor argument's shape and dtype, and
its values when small (``input_ids``, ``video_grid_thw``, ``second_per_grid_ts``,
...). Nothing of this exists in the package itself.
"""

import json
import os

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
