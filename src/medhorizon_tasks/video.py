"""Decoding exactly the frames a plan asks for (PyAV).

Why PyAV: it ships FFmpeg in its wheel, is frame-accurate (variable frame rate
included) and was the fastest exact reader measured on this machine kind (see
the project's decoding notes). Why not the alternatives: OpenCV returns stale
frames past a truncation without an error and mis-indexes VFR video; decord2
returns wrong frames silently; lmms-eval's own reader decodes every frame.

How (``benchmarks/decode.py`` measures it against lmms-eval's and decord's
readers):

* One pass over the packets (no decoding) gives every frame's presentation
  timestamp and the keyframes. Frame ``i`` is the ``i``-th frame in
  presentation order.
* Targets are grouped by the keyframe that opens their GOP. Each group costs
  one seek and the packets from that keyframe up to its last target; nothing
  after it is decoded (the decoder is drained instead). Decoding on into the
  next GOP instead of seeking never paid off: a seek costs about as much as
  decoding one or two frames.
* H.264 packets that are not targets are decoded with ``skip_frame=NONREF``:
  a picture with ``nal_ref_idc == 0`` is never used to predict another one, so
  dropping it leaves every other picture bit-identical. With 3 B-frames per
  P-frame this saved ~40% of the decoding time on the benchmark video.
* One demuxer feeds ``workers`` decoder threads (one per core by default),
  each with its own single-threaded decoder: a thread takes the next group's
  packets from the demuxer (under a lock), decodes them, and comes back for
  more, so both cores stay busy even when one of them is slowed down by other
  work. PyAV releases the GIL while reading and decoding. One demuxer rather
  than one per worker because FFmpeg's demuxer holds a table of every sample
  (~40-70 bytes per frame, about 100 MB for 20 hours at 25 fps): one per
  worker would make memory grow with the video's length.
* Only targets are converted to RGB, straight into the output array.

Memory: the output (``len(plan) x H x W x 3``), the packet index (8 bytes per
frame, plus the demuxer's table), and per worker one decoder and one group's
compressed packets (at most a GOP), whatever the video's length.

A decode error or a target past the end of the stream is reported as a
:class:`~medhorizon_tasks.errors.VideoError` naming the item and path.
"""

from __future__ import annotations

import os
import threading
from array import array
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, NamedTuple

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
        """What the planner needs. A constant-frame-rate video (every frame one tick step after the
        previous) is described by its exact rate alone, so the planner does not hold one float per frame;
        otherwise the real frame times are passed on."""
        steps = np.diff(self.pts)
        if len(steps) and steps[0] > 0 and np.all(steps == steps[0]):
            return VideoMeta(self.num_frames, 1.0 / (float(steps[0]) * self.time_base))
        times = (self.pts - self.pts[0]) * self.time_base
        return VideoMeta(self.num_frames, self.fps, tuple(times.tolist()))


def open_video(path: Path, uid: str | None):
    """An open PyAV container with a video stream, or a VideoError naming the item and path."""
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
    container = open_video(path, uid)
    try:
        return _index(container, path, uid)
    finally:
        container.close()


def _index(container, path: Path, uid: str | None) -> VideoIndex:
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
    order = np.frombuffer(pts, dtype=np.int64)
    order.sort()  # in place, in the array's own buffer: no copy
    key_positions = np.searchsorted(order, np.sort(np.frombuffer(key_pts, dtype=np.int64)))
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    fps = float(rate) if rate else 0.0
    if fps <= 0:
        span = (order[-1] - order[0]) * float(stream.time_base)
        fps = (len(order) - 1) / span if span > 0 else 1.0
    return VideoIndex(order, key_positions.astype(np.int64), float(stream.time_base), fps,
                      stream.codec_context.width, stream.codec_context.height)


def output_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Frame size after shrinking so the longer side is at most ``max_side`` (never enlarged; even sizes)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(2, int(round(width * scale / 2)) * 2), max(2, int(round(height * scale / 2)) * 2)


def decode_plan(path: str | os.PathLike, plan: FramePlan, *, max_side: int | None = None,
                uid: str | None = None, expected_frames: int | None = None,
                index: VideoIndex | None = None, workers: int | None = None) -> np.ndarray:
    """The plan's frames as an ``(len(plan), H, W, 3)`` uint8 RGB array, in plan order.

    ``expected_frames`` is the frame count the data claims; a file with fewer
    frames is reported as truncated instead of silently giving other frames.
    ``workers``: decoder threads (default: one per core, at most 2).
    """
    path = Path(path)
    container = open_video(path, uid)
    try:
        index = index or _index(container, path, uid)
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
        groups = _groups(index, wanted)
        n_workers = max(1, min(workers or min(2, os.cpu_count() or 1), len(groups)))
        stream = container.streams.video[0]
        decoders = [_Decoder(stream.codec_context, rows, out, path, uid) for _ in range(n_workers)]
        packets = _read_groups(container, stream, groups, index, path, uid)
        if n_workers == 1:
            for group, group_packets in packets:
                decoders[0].decode(group, group_packets)
        else:
            _decode_in_threads(packets, decoders)
        return out
    finally:
        container.close()


class _Group(NamedTuple):
    """Targets (sorted frame positions, and their timestamps) decoded after one seek to frame ``start``
    (the keyframe that opens their GOP, or 0)."""

    start: int
    targets: list[int]
    target_pts: list[int]


def _groups(index: VideoIndex, wanted: np.ndarray) -> list[_Group]:
    keys = index.key_positions
    gop = np.searchsorted(keys, wanted, side="right") - 1
    # Frames before the first keyframe (a stream that does not start with one) are decoded from frame 0.
    starts = np.zeros_like(wanted) if len(keys) == 0 else np.where(gop >= 0, keys[np.maximum(gop, 0)], 0)
    cuts = np.flatnonzero(np.diff(starts)) + 1
    return [_Group(int(s[0]), t.tolist(), index.pts[t].tolist())
            for s, t in zip(np.split(starts, cuts), np.split(wanted, cuts))]


def _read_groups(container, stream, groups: list[_Group], index: VideoIndex, path: Path,
                 uid: str | None) -> Iterator[tuple[_Group, list]]:
    """Each group with its packets: from the keyframe (in decode order) up to the last target's packet."""
    import av

    for group in groups:
        unseen = set(group.target_pts)
        packets = []
        try:
            container.seek(int(index.pts[group.start]), stream=stream, backward=True, any_frame=False)
            for packet in container.demux(stream):
                if packet.size == 0:  # the end-of-stream marker
                    break
                packets.append(packet)
                unseen.discard(packet.pts)
                if not unseen:
                    break
        except av.error.FFmpegError as exc:
            raise VideoError(f"video is corrupt or truncated near frame {group.targets[0]} "
                             f"({type(exc).__name__}: {exc})", path=str(path), uid=uid) from None
        yield group, packets  # a target whose packet never came is reported missing by the decoder


class _Decoder:
    """A single-threaded decoder configured like the stream's own, writing targets into ``out``.

    Decoders are created fresh (rather than one container per worker) so that all workers share one
    demuxer; the stream's codec parameters are copied over so every worker decodes exactly as the
    stream's own decoder would (same extradata, and the container's colour description, which the RGB
    conversion reads).
    """

    _COPIED = ("width", "height", "pix_fmt", "bits_per_coded_sample", "codec_tag",
               "color_range", "color_primaries", "color_trc", "colorspace")

    def __init__(self, template, rows: dict[int, list[int]], out: np.ndarray, path: Path, uid: str | None):
        import av

        self.context = av.CodecContext.create(template.codec)
        self.context.extradata = template.extradata
        for name in self._COPIED:
            value = getattr(template, name)
            if value is not None:
                setattr(self.context, name, value)
        self.context.thread_count = 1  # the workers already use the cores; FFmpeg threads would only contend
        self.skip_nonref = template.name in _SKIP_NONREF_CODECS
        self.rows, self.out, self.path, self.uid = rows, out, path, uid

    def decode(self, group: _Group, packets: list) -> None:
        import av

        context = self.context
        remaining = set(group.target_pts)
        try:
            for packet in packets:
                if self.skip_nonref:
                    # A packet without a timestamp might be a target: decode it fully.
                    is_target = packet.pts is None or packet.pts in remaining
                    context.skip_frame = "DEFAULT" if is_target else "NONREF"
                self._keep(context.decode(packet), remaining)
            self._keep(context.decode(None), remaining)  # drain the frames held back for reordering
        except av.error.FFmpegError as exc:
            raise VideoError(f"video is corrupt or truncated near frame {group.targets[0]} "
                             f"({type(exc).__name__}: {exc})", path=str(self.path), uid=self.uid) from None
        finally:
            context.flush_buffers()  # ready for the next group (also leaves draining mode)
        if remaining:
            missing = [t for t, p in zip(group.targets, group.target_pts) if p in remaining]
            raise VideoError(f"frames {missing[:5]} could not be decoded (truncated or corrupt video)",
                             path=str(self.path), uid=self.uid)

    def _keep(self, frames, remaining: set[int]) -> None:
        h, w = self.out.shape[1:3]
        for frame in frames:
            if frame.pts not in remaining:
                continue
            remaining.discard(frame.pts)
            if frame.width != w or frame.height != h:
                frame = frame.reformat(width=w, height=h)
            first, *others = self.rows[frame.pts]
            self.out[first] = frame.to_ndarray(format="rgb24")
            for row in others:
                self.out[row] = self.out[first]


def _decode_in_threads(packets: Iterator[tuple[_Group, list]], decoders: list[_Decoder]) -> None:
    """One thread per decoder; each takes the next group from the shared demuxer (one at a time, under a
    lock) and decodes it. Re-raises the first error; after an error the others stop after their group."""
    demux_lock = threading.Lock()
    stop = threading.Event()

    def run(decoder: _Decoder) -> None:
        try:
            while not stop.is_set():
                with demux_lock:
                    item = next(packets, None)
                if item is None:
                    return
                decoder.decode(*item)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(len(decoders), thread_name_prefix="decode_plan") as pool:
        futures = [pool.submit(run, decoder) for decoder in decoders]
        try:
            for future in futures:
                future.result()
        finally:
            stop.set()  # on Ctrl-C in this thread too
