"""Routing shared by the bridges: planned frames to the bridge, everything else to lmms-eval's wrapper."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from loguru import logger
from tqdm import tqdm

from ....core.responses import empty_accelerator_cache, is_out_of_memory, oom_text, response_failure
from ....core.video.ahead import ahead, by_video
from ....core.video.planned_frames import PlannedFrames, describe_visuals
from ....core.video.size import SizeRule, requested_size
from ..model_args import CheckedModelArgs
from .frames import planned_frames

__all__ = ["PlannedFramesBridge", "request_visuals", "request_frames", "model_device", "visuals_ahead",
           "answer_or_oom"]


def answer_or_oom(answer: Callable[[], object], visuals, where: str = "", what: str | None = None):
    """``answer()``, or, when the accelerator ran out of memory on this item, the ``oom`` response
    (:func:`~medhorizon_tasks.core.responses.oom_text`, naming ``visuals``' frame count and size, or ``what``
    when given) after the
    accelerator's cache is emptied: the item is scored as ``oom`` and the run goes on with the next one. Any other
    error is raised."""
    try:
        return answer()
    except Exception as exc:  # noqa: BLE001 (only out-of-memory is an item's status; the rest is raised)
        if not is_out_of_memory(exc):
            raise
        error = f"{type(exc).__name__}: {exc}"
    # out of the except block: the failed forward's frames (and their tensors) are released before the cache is
    empty_accelerator_cache()
    what = what or describe_visuals(visuals)
    logger.warning(f"[medhorizon] {where + ': ' if where else ''}out of accelerator memory on {what}: this item is "
                   f"scored as oom and the run goes on (a resumed run asks it again)")
    return oom_text(what, error)


def request_visuals(model, request):
    """What the ``doc_to_visual`` of a "simple" generation request ``(context, gen_kwargs, doc_to_visual,
    doc_id, task, split)`` returns for its document (None without one)."""
    _, _, doc_to_visual, doc_id, task, split = request.args[:6]
    return None if doc_to_visual is None else doc_to_visual(model.task_dict[task][split][doc_id])


def request_video(model, request):
    """The video a request's document points at (``(video_root, video_path)`` of the package's tasks), or None."""
    _, _, _, doc_id, task, split = request.args[:6]
    try:
        doc = model.task_dict[task][split][doc_id]
    except (AttributeError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(doc, dict) or not doc.get("video_path"):
        return None
    return (doc.get("video_root"), doc["video_path"])


def visuals_ahead(model, requests, rule: SizeRule | None = None):
    """``(i, visuals)`` of every request ``i``, the requests of one video one after the other
    (:func:`~medhorizon_tasks.core.video.ahead.by_video`: lmms-eval orders them by prompt length), the next
    requests' frames decoded on worker threads while the caller answers the earlier ones
    (:func:`~medhorizon_tasks.core.video.ahead.ahead`: bounded in count and bytes); each decoded at ``rule``'s
    size when given (the model's processor's own). Callers put each answer at its ``i``. A video error is part
    of the visuals (``doc_to_visual`` records it for its item); any other error of a request is raised at it."""
    def work(request):
        with requested_size(rule):
            return request_visuals(model, request)

    order = by_video(request_video(model, r) for r in requests)
    for done in ahead([requests[i] for i in order], work):
        if done.error is not None:
            raise done.error
        yield order[done.index], done.value


def request_frames(model, request) -> PlannedFrames | None:
    """The planned frames of a request, or None when its visuals are anything else."""
    return planned_frames(request_visuals(model, request))


def model_device(model):
    """Where the inputs go: the device of the model's first weights. Several wrappers hard-code
    ``cuda:0`` (InternVL) or ``.cuda()`` (VideoLLaMA3) instead, which is wrong for CPU and device_map runs."""
    try:
        return next(model.model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return model.device


class PlannedFramesBridge(CheckedModelArgs):
    """Mixin placed before an lmms-eval wrapper in a bridge's bases.

    ``generate_until`` asks each request's ``doc_to_visual`` for its visuals, in
    order, the next requests' while the model answers the current one
    (:func:`visuals_ahead`: bounded in count and bytes), at the size
    ``frame_size_rule`` says (the processor's official size for that many
    frames of that source; None: the task's). Planned frames go to :meth:`generate_from_frames`; every
    other request is handed, unchanged, to the wrapper's own
    ``generate_until`` at the end (which calls its ``doc_to_visual`` again:
    for other tasks that is a path or a few images). Results come back in
    request order.

    An empty plan (the item's video failed; its answer is not scored) goes to
    the wrapper too, unless ``answers_failed_plans``: then the bridge answers
    it with no frames (for wrappers whose own path cannot).
    """

    answers_failed_plans = False
    frame_size_rule: SizeRule | None = None

    def iter_requests(self, requests) -> Iterator[tuple[int, PlannedFrames | None]]:
        for i, visuals in visuals_ahead(self, requests, self.frame_size_rule):
            frames = planned_frames(visuals)
            if frames is None and self.answers_failed_plans and isinstance(visuals, PlannedFrames):
                frames = visuals
            yield i, frames

    def generate_until(self, requests) -> list:
        results: list = [None] * len(requests)
        others: list[int] = []
        bar = tqdm(total=len(requests), disable=self.rank != 0, desc=f"{type(self).__name__} (planned frames)")
        for i, frames in self.iter_requests(requests):
            if frames is None:
                others.append(i)
                continue
            context, gen_kwargs = requests[i].args[0], requests[i].args[1]
            answer = answer_or_oom(lambda: self.generate_from_frames(context, frames, dict(gen_kwargs)), frames,
                                   f"doc {requests[i].args[3]} of {requests[i].args[4]}")
            results[i] = answer
            if response_failure(answer) is None:  # an oom is no answer to keep in lmms-eval's cache
                self.cache_hook.add_partial("generate_until", (context, gen_kwargs), answer)
            bar.update(1)
        bar.close()
        if others:
            for i, answer in zip(others, super().generate_until([requests[i] for i in others])):
                results[i] = answer
        return results

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        """The model's answer to ``context`` about ``frames`` (one request; no frames only with
        ``answers_failed_plans``)."""
        raise NotImplementedError
