"""Test-only: a frame-reading model whose forward runs out of accelerator memory once, loaded by any Python process
that has this folder on PYTHONPATH and ``MEDHORIZON_TEST_OOM_ONCE`` set (a marker file's path).

The synthetic benchmark's needle probe (``--model medhorizon_needle``) reads the visual code from its frames; here
each of its answers first runs a tiny torch module over the frames, whose forward raises the real
``torch.cuda.OutOfMemoryError`` (CPU torch can raise it) on the second item the process answers, once: the marker
file is then written, and every later forward (a resumed run's) goes through. Nothing of this exists in the package.
"""

import os

_MARK = os.environ.get("MEDHORIZON_TEST_OOM_ONCE")

if _MARK:
    from medhorizon_tasks.data.synthetic import probes

    _needle_answer = probes.needle_answer
    _calls = []

    def needle_answer(images, prompt, seed=0):
        import numpy as np
        import torch

        class TinyVision(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(3, 2)

            def forward(self, pixels):
                _calls.append(pixels.shape[0])
                if len(_calls) == 2 and not os.path.exists(_MARK):
                    open(_MARK, "w").close()
                    raise torch.cuda.OutOfMemoryError(
                        f"CUDA out of memory. Tried to allocate 20.00 GiB for {pixels.shape[0]} frames. GPU 0 has a "
                        "total capacity of 79.19 GiB of which 1.06 GiB is free.")
                return self.proj(pixels.float().mean(dim=(1, 2)))

        pixels = torch.from_numpy(np.stack([np.asarray(im) for im in images])) if images else torch.zeros(1, 2, 2, 3)
        TinyVision()(pixels)
        return _needle_answer(images, prompt, seed)

    probes.needle_answer = needle_answer
