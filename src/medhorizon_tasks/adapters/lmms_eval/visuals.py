"""What every task's ``doc_to_visual`` and ``process_results`` do about frames and video errors, in one place.

``doc_to_visual`` decodes the planned frames and records the outcome (frames, or
the video error) in :data:`medhorizon_tasks.core.video.status.OUTCOMES` under the
item's key for the task's whole frame setting; ``process_results`` reads it
back with :func:`video_error`, so an item whose video failed is scored as a
video error in exactly the tasks whose plan failed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import numpy as np
from loguru import logger

from ...core.errors import MedHorizonError, VideoError
from ...core.paths import resolve_video_path
from ...core.sampling import FramePlan
from ...core.video.planned_frames import PlannedFrames
from ...core.video.status import OUTCOMES, UNKNOWN


def task_kwargs() -> dict:
    """The ``lmms_eval_specific_kwargs`` of the lmms-eval task whose ``process_results`` is running.

    lmms-eval 0.7.3 passes ``process_results`` only ``(doc, results)``, yet the score of
    an item depends on its task's frame setting (which frames were decoded, and so
    whether its video failed). The hook is called straight from
    ``ConfigurableTask.process_results(self, doc, results, ...)``, so the task is the
    ``self`` of a calling frame; nothing else in lmms-eval is touched.
    """
    frame = sys._getframe(1)
    for _ in range(8):
        frame = frame.f_back
        if frame is None:
            break
        task = frame.f_locals.get("self")
        if task is not None and hasattr(task, "lmms_eval_specific_kwargs") and hasattr(task, "config"):
            return dict(task.lmms_eval_specific_kwargs or {})
    raise MedHorizonError("process_results was not called by an lmms-eval task (lmms-eval's "
                          "ConfigurableTask.process_results); this lmms-eval version is not supported")


def video_file(video_root: str, relative: str, uid: str) -> Path | None:
    """The file an item's frames come from; None when its pointer is refused (that is then its video error)."""
    try:
        return resolve_video_path(video_root, relative, uid=uid)
    except VideoError:
        return None


def decoded_frames(key: str, decode: Callable[[], tuple[FramePlan, np.ndarray, float | None]],
                   task: str, video: Path | None = None, times: bool = True) -> PlannedFrames:
    """The frames ``decode()`` returns as PIL images with their timestamps, in plan order.

    ``times=False`` (the frame-order tasks, every order): marked not chronological whatever the order, so a
    bridge shows the same evenly spaced times for every order (:func:`~.bridges.frames.shown_times`).

    A missing or unreadable video does not stop the run: its reason is recorded
    under ``key`` (``process_results`` scores the item as a video error) and the
    model gets no frames. ``video`` (:func:`video_file`) is recorded with the
    outcome, so that a journaled response is asked again once its file changes.
    """
    from PIL import Image

    try:
        plan, frames, duration_s = decode()
    except VideoError as exc:
        OUTCOMES.record(key, str(exc), video)
        logger.warning(f"[{task}] {exc}")
        return PlannedFrames(error=str(exc))
    OUTCOMES.record(key, None, video)
    return PlannedFrames([Image.fromarray(f) for f in frames], timestamps=plan.timestamps, policy=plan.policy,
                         duration_s=duration_s, chronological=times and list(plan.indices) == sorted(plan.indices))


def video_error(key: str, decode: Callable[[], object]) -> str | None:
    """The video error of ``key`` (None: its frames decoded), as ``doc_to_visual`` recorded it.

    An outcome nobody recorded in this process belongs to a response that was
    not produced here (lmms-eval's ``--use_cache``, or a journal written before
    outcomes were journaled): the plan is decoded once now to find out, rather
    than assuming the frames were fine.
    """
    outcome = OUTCOMES.get(key)
    if outcome is UNKNOWN:
        try:
            decode()
            outcome = None
        except VideoError as exc:
            outcome = str(exc)
        OUTCOMES.record(key, outcome)
    return outcome
