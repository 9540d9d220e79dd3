"""What every task's ``doc_to_visual`` does with decoded frames, in one place."""

from __future__ import annotations

from typing import Callable, Hashable

import numpy as np
from loguru import logger

from ...errors import VideoError


def frames_or_error(decode: Callable[[], np.ndarray], errors: dict, key: Hashable, task: str) -> list:
    """PIL images of the frames ``decode()`` returns, in order.  A missing or unreadable video does
    not stop the run: its reason is kept in ``errors[key]`` (``process_results`` scores the item as a
    video error) and the model gets no frames."""
    from PIL import Image

    try:
        frames = decode()
    except VideoError as exc:
        errors[key] = str(exc)
        logger.warning(f"[{task}] {exc}")
        return []
    return [Image.fromarray(f) for f in frames]
