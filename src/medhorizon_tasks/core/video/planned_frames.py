"""The frames a task hands a model: a plain list of PIL images that also knows when each was taken.

Every lmms-eval "simple" model takes a list of images, so that is what a task
returns. Models that take native video (Qwen2.5-VL's ``second_per_grid_ts``,
Qwen3-VL's ``<t seconds>`` labels, InternVL's "FrameN:" prefixes, VideoLLaMA3's
timestamps) need each frame's real time as well; it travels with the list
(``timestamps``) and with each image (``image.info["timestamp_s"]``), so no
adapter has to parse the prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["PlannedFrames", "TIMESTAMP_KEY", "describe_visuals"]

TIMESTAMP_KEY = "timestamp_s"


class PlannedFrames(list):
    """``list`` of PIL images, in the order the model sees them, plus:

    * ``timestamps``: each frame's time in seconds on the video's own timeline;
    * ``policy``: the frame plan's policy text (e.g. ``fps_cap(fps=1,cap=64)``);
    * ``duration_s``: the video file's duration;
    * ``chronological``: False when the order was perturbed on purpose, and
      for every order of the frame-order diagnostic (the original included, so
      that its four tasks differ in order only); adapters must then not reveal
      real times;
    * ``error``: the video error when the frames could not be decoded (the
      list is then empty);
    * ``interleaved``: the prompt's own layout when the benchmark fixes one
      (Sureon, Fig. 17): text parts (``str``) and frame positions (``int``),
      in order; a bridge that can interleave text and images sends exactly
      that, in place of its frames-then-question layout. None: the bridge's
      layout.
    """

    def __init__(self, images: Iterable = (), *, timestamps: Sequence[float] = (), policy: str = "",
                 duration_s: float | None = None, chronological: bool = True, error: str | None = None,
                 interleaved: Sequence[str | int] | None = None):
        super().__init__(images)
        self.timestamps = tuple(float(t) for t in timestamps)
        if len(self.timestamps) != len(self):
            raise ValueError(f"{len(self)} frames but {len(self.timestamps)} timestamps")
        self.policy = policy
        self.duration_s = duration_s
        self.chronological = chronological
        self.error = error
        self.interleaved = tuple(interleaved) if interleaved is not None else None
        if self.interleaved is not None and sorted(p for p in self.interleaved if isinstance(p, int)) != list(
                range(len(self))):
            raise ValueError("an interleaved layout must place every frame exactly once")
        for image, t in zip(self, self.timestamps):
            info = getattr(image, "info", None)
            if isinstance(info, dict):
                info[TIMESTAMP_KEY] = t

    def __reduce_ex__(self, protocol):
        # keep the attributes when lmms-eval or a model copies / pickles the visuals
        return (_rebuild, (list(self), self.timestamps, self.policy, self.duration_s, self.chronological, self.error,
                           self.interleaved))


def _rebuild(images, timestamps, policy, duration_s, chronological, error, interleaved=None) -> PlannedFrames:
    return PlannedFrames(images, timestamps=timestamps, policy=policy, duration_s=duration_s,
                         chronological=chronological, error=error, interleaved=interleaved)


def describe_visuals(visuals) -> str:
    """What a model was given, in a few words for a report: ``64 frames of 448x252`` (frame count and pixel size;
    a range when the sizes differ), ``no frames``, or the kind of thing it was (a path, ...)."""
    if visuals is None:
        return "no frames"
    if isinstance(visuals, (list, tuple)):
        sizes = [tuple(v.size) for v in visuals if isinstance(getattr(v, "size", None), tuple)]
        if not visuals:
            return "no frames"
        if len(sizes) != len(visuals):
            return f"{len(visuals)} visual(s)"
        small, large = min(sizes, key=lambda s: s[0] * s[1]), max(sizes, key=lambda s: s[0] * s[1])
        size = f"{small[0]}x{small[1]}" if small == large else f"{small[0]}x{small[1]} to {large[0]}x{large[1]}"
        return f"{len(visuals)} frame{'s' if len(visuals) != 1 else ''} of {size}"
    return type(visuals).__name__
