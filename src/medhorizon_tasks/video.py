"""Decoding exactly the frames a plan asks for (PyAV).

Why PyAV: it ships FFmpeg in its wheel, is frame-accurate (variable frame rate
included) and was the fastest exact reader measured on this machine kind (see
the project's decoding notes). Why not the alternatives: OpenCV returns stale
frames past a truncation without an error and mis-indexes VFR video; decord2
returns wrong frames silently; lmms-eval's own reader decodes every frame.

How:

* One pass over the packets (no decoding) gives every frame's presentation
  timestamp and the keyframes. Frame ``i`` is the ``i``-th frame in
  presentation order.
* Targets are grouped by the keyframe that opens their GOP. Each group costs
  one seek and a forward decode that stops at its last target; nothing after
  it is decoded. (Decoding on into the next GOP instead of seeking never paid
  off: a seek costs about as much as decoding one or two frames.)
* H.264 packets that are not a target are decoded with
  ``skip_frame=NONREF``: a picture with ``nal_ref_idc == 0`` is never used
  to predict another one, so dropping it leaves every other picture
  bit-identical. With B-frames this halves the work.
* Groups are handed out to ``workers`` threads (one per core by default),
  each with its own demuxer and a single-threaded decoder. PyAV releases the
  GIL while reading and decoding, so the threads run in parallel; groups are
  taken from a shared queue in time order, which keeps both cores busy even
  when one of them is slowed down by other work.
* Only targets are converted to RGB, straight into the output array, so memory
  is the output (``len(plan) x H x W x 3``) plus a decoder per worker, never
  the video.

A decode error or a target past the end of the stream is reported as a
:class:`~medhorizon_tasks.errors.VideoError` naming the item and path.
"""

from __future__ import annotations

import os
from array import array
from collections import deque
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .errors import VideoError
from .sampling import FramePlan, VideoMeta

__all__ = ["VideoIndex", "index_video", "decode_plan", "output_size"]

# Codecs whose non-reference pictures are skipped while decoding towards a
# target. H.264 only: HEVC's "_N" pictures may still be referenced by a higher
# temporal sub-layer, so skipping them would not be exact there.
_SKIP_NONREF_CODECS = frozenset({"h264"})


@dataclass(frozen=True)
class VideoIndex:
    """Presentation timestamps (stream time base) of every frame, and which frames are keyframes."""

    pts: np.ndarray          # int64, sorted: pts[i] is frame i
    key_positions: np.ndarray  # int64, sorted frame positions of keyframes
    time_base: float
    fps: float
    width: int
    height: int

    @property
    def num_frames(self) -> int:
        return int(len(self.pts))

    def meta(self) -> VideoMeta:
        """What the planner needs. Constant-frame-rate video (every frame one tick step after the
        previous) is described by its exact rate alone, so the planner does not hold one float per frame;
        otherwise the real frame times are passed on."""
        steps = np.diff(self.pts)
        if len(steps) and steps[0] > 0 and np.all(steps == steps[0]):
            return VideoMeta(self.num_frames, 1.0 / (float(steps[0]) * self.time_base))
        times = (self.pts - self.pts[0]) * self.time_base
        return VideoMeta(self.num_frames, self.fps, tuple(times.tolist()))


def _open(path: Path, uid: str | None):
    import av

    if not path.exists():
        raise VideoError("video file not found", path=str(path), uid=uid)
    if not path.is_file():
        raise VideoError("video path is not a regular file", path=str(path), uid=uid)
    try:
        container = av.open(str(path))
    except Exception as exc:  # av.error.* for unreadable/truncated/not-a-video
        raise VideoError(f"video cannot be opened ({type(exc).__name__}: {exc})", path=str(path), uid=uid) from None
    if not container.streams.video:
        container.close()
        raise VideoError("file has no video stream", path=str(path), uid=uid)
    return container


def index_video(path: str | os.PathLike, *, uid: str | None = None) -> VideoIndex:
    """Read every packet's timestamp (no decoding). Memory: 8 bytes per frame."""
    path = Path(path)
    container = _open(path, uid)
    try:
        stream = container.streams.video[0]
        pts, key_pts = array("q"), array("q")  # compact: a list of ints costs ~5x more for a 20-hour video
        try:
            for packet in container.demux(stream):
                t = packet.pts
                if t is None or packet.size == 0:
                    continue
                pts.append(t)
                if packet.is_keyframe:
                    key_pts.append(t)
        except Exception as exc:
            raise VideoError(f"video is unreadable or truncated while indexing ({type(exc).__name__}: {exc})",
                             path=str(path), uid=uid) from None
        if not pts:
            raise VideoError("video stream has no frames", path=str(path), uid=uid)
        order = np.sort(np.frombuffer(pts, dtype=np.int64))
        key_positions = np.searchsorted(order, np.sort(np.frombuffer(key_pts, dtype=np.int64)))
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        fps = float(rate) if rate else 0.0
        if fps <= 0:
            span = (order[-1] - order[0]) * float(stream.time_base)
            fps = (len(order) - 1) / span if span > 0 else 1.0
        return VideoIndex(order, key_positions.astype(np.int64), float(stream.time_base), fps,
                          stream.codec_context.width, stream.codec_context.height)
    finally:
        container.close()


def output_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Frame size after shrinking so the longer side is at most ``max_side`` (never enlarged; even sizes)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(2, int(round(width * scale / 2)) * 2), max(2, int(round(height * scale / 2)) * 2)


class _Group(NamedTuple):
    """One seek: decode forward from frame ``start`` (a keyframe, or 0) through ``targets`` (sorted)."""

    start: int
    targets: list[int]


def _groups(index: VideoIndex, wanted: np.ndarray) -> list[_Group]:
    """Sorted distinct target frames grouped by the keyframe that opens their GOP."""
    keys = index.key_positions
    gop = np.searchsorted(keys, wanted, side="right") - 1
    # Frames before the first keyframe (if the stream does not start with one) are decoded from frame 0.
    starts = np.zeros_like(wanted) if len(keys) == 0 else np.where(gop >= 0, keys[np.maximum(gop, 0)], 0)
    cuts = np.flatnonzero(np.diff(starts)) + 1
    return [_Group(int(s[0]), t.tolist()) for s, t in zip(np.split(starts, cuts), np.split(wanted, cuts))]


def decode_plan(path: str | os.PathLike, plan: FramePlan, *, max_side: int | None = None,
                uid: str | None = None, expected_frames: int | None = None,
                index: VideoIndex | None = None, workers: int | None = None) -> np.ndarray:
    """The plan's frames as an ``(len(plan), H, W, 3)`` uint8 RGB array, in plan order.

    ``expected_frames`` is the frame count the data claims; a file with fewer
    frames is reported as truncated instead of silently giving other frames.
    ``workers``: decoding threads (default: one per core, at most 2).
    """
    path = Path(path)
    index = index or index_video(path, uid=uid)
    n = index.num_frames
    if expected_frames is not None and n < expected_frames and max(plan.indices, default=-1) >= n:
        raise VideoError(f"video is truncated: the data says {expected_frames} frames, the file has {n}",
                         path=str(path), uid=uid)
    w, h = output_size(index.width, index.height, max_side)
    out = np.empty((len(plan), h, w, 3), dtype=np.uint8)
    if not plan.indices:
        return out
    wanted = np.unique(np.asarray(plan.indices, dtype=np.int64))
    if wanted[0] < 0 or wanted[-1] >= n:
        raise VideoError(f"plan asks for frame {wanted[-1]} but the video has {n} frames (truncated?)",
                         path=str(path), uid=uid)

    # Output rows of each target timestamp (a plan may repeat a frame or list frames out of order).
    rows: dict[int, list[int]] = {}
    for row, frame in enumerate(plan.indices):
        rows.setdefault(int(index.pts[frame]), []).append(row)
    pending = deque(_groups(index, wanted))
    n_workers = max(1, min(workers or min(2, os.cpu_count() or 1), len(pending)))
    decode = _GroupDecoder(path, uid, index, rows, out).run

    if n_workers == 1:
        decode(pending)
        return out
    with ThreadPoolExecutor(n_workers, thread_name_prefix="decode_plan") as pool:
        futures = [pool.submit(decode, pending) for _ in range(n_workers)]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
        finally:
            pending.clear()  # after a failure (or Ctrl-C) the other workers stop after their current group
    for future in futures:
        future.result()  # re-raises a worker's VideoError
    return out


class _GroupDecoder:
    """Decodes groups taken from a shared queue into the rows of ``out``; one call of :meth:`run` per worker."""

    def __init__(self, path: Path, uid: str | None, index: VideoIndex, rows: dict[int, list[int]],
                 out: np.ndarray):
        self.path, self.uid, self.index, self.rows, self.out = path, uid, index, rows, out

    def run(self, pending: deque[_Group]) -> None:
        container = _open(self.path, self.uid)
        try:
            stream = container.streams.video[0]
            # One single-threaded decoder per worker: the workers already use the cores, and frame threading
            # would pay a pipeline flush at every seek.
            stream.codec_context.thread_count = 1
            skip_nonref = stream.codec_context.name in _SKIP_NONREF_CODECS
            while True:
                try:
                    group = pending.popleft()  # atomic: safe to share between threads
                except IndexError:
                    return
                self._decode(container, stream, group, skip_nonref)
        finally:
            container.close()

    def _decode(self, container, stream, group: _Group, skip_nonref: bool) -> None:
        import av

        pts = self.index.pts
        remaining = {int(pts[t]) for t in group.targets}
        context = stream.codec_context
        h, w = self.out.shape[1:3]
        try:
            container.seek(int(pts[group.start]), stream=stream, backward=True, any_frame=False)
            for packet in container.demux(stream):
                if skip_nonref:
                    # A packet without a timestamp might be a target: decode it fully.
                    is_target = packet.pts is None or packet.pts in remaining
                    context.skip_frame = "DEFAULT" if is_target else "NONREF"
                for frame in context.decode(packet):
                    if frame.pts not in remaining:
                        continue
                    if frame.width != w or frame.height != h:
                        frame = frame.reformat(width=w, height=h)
                    rows = self.rows[frame.pts]
                    self.out[rows[0]] = frame.to_ndarray(format="rgb24")
                    for row in rows[1:]:
                        self.out[row] = self.out[rows[0]]
                    remaining.discard(frame.pts)
                if not remaining:
                    return
        except av.error.FFmpegError as exc:
            raise VideoError(f"video is corrupt or truncated near frame {group.targets[0]} "
                             f"({type(exc).__name__}: {exc})", path=str(self.path), uid=self.uid) from None
        missing = [t for t in group.targets if int(pts[t]) in remaining]
        raise VideoError(f"frames {missing[:5]} could not be decoded (truncated or corrupt video)",
                         path=str(self.path), uid=self.uid)
