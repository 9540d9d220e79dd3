"""Decoding exactly the frames a plan asks for (PyAV).

Why PyAV: it ships FFmpeg in its wheel, is frame-accurate (variable frame rate
included) and was the fastest exact reader measured on this machine kind (see
the project's decoding notes). Why not the alternatives: OpenCV returns stale
frames past a truncation without an error and mis-indexes VFR video; decord2
returns wrong frames silently; lmms-eval's own reader decodes every frame.

What frame ``i`` is: the ``i``-th frame (in presentation order) that a plain
decode of the file from its start outputs, which is what a player shows. Not
every packet is such a frame:

* An edit list can hide packets: an mp4 cut with ``ffmpeg -ss T -c copy``
  starts at the keyframe before ``T`` and flags the packets before ``T`` as
  discarded (decoded as references, never shown).
* A stream that starts mid-GOP (a TS cut out of a broadcast) begins with
  pictures whose references are missing: those before the first keyframe, and
  an open GOP's leading pictures after it. Whether a decoder still outputs them
  depends on the codec (H.264 and MPEG-2 drop them, HEVC shows them), so the
  index pass decodes that lead-in and keeps exactly the pictures that came out.
  A file that starts with a keyframe has no lead-in: nothing is decoded.

How (``perf/decode_speed.py`` measures it against lmms-eval's, decord's and
torchcodec's readers and against the decode work no exact reader can avoid;
the index below is built once per file and kept by :mod:`.index_store`):

* One pass over the packets (no decoding but the lead-in above and the first
  keyframe) gives every frame's presentation timestamp, the keyframes (with
  their decode timestamps and decode-order numbers) and the display rotation:
  FFmpeg attaches the container's display matrix to decoded frames only.
* Targets are grouped by the keyframe that opens their GOP. Each group costs
  one seek and the packets from that keyframe up to its last target; nothing
  after it is decoded (the decoder is drained instead). Decoding on into the
  next GOP instead of seeking never paid off: a seek costs about as much as
  decoding one or two frames.
* Seeks are checked: mp4 and mkv seek by presentation time, through an index,
  onto the keyframe itself; MPEG-TS has no index and seeks by decode time with
  a binary search over the file, which can land past the keyframe. After every
  seek the packets are compared with the index: packets before the keyframe
  are skipped, and a landing past it is retried from earlier keyframes (then
  from the stream's start).
* Reading is bounded: decode order differs from presentation order by at most
  the slack the index measured, so the index says how many packets can lie
  between a keyframe and a target. A group whose targets have not come within
  that budget is reported, instead of reading on to the end of the file.
* H.264 packets that are not targets are decoded with ``skip_frame=NONREF``:
  a picture with ``nal_ref_idc == 0`` is never used to predict another one, so
  dropping it leaves every other picture bit-identical. With 3 B-frames per
  P-frame this saved ~40% of the decoding time on the benchmark video.
* One demuxer feeds ``workers`` decoder threads (one per available core by
  default: ``os.sched_getaffinity``),
  each with its own single-threaded decoder: a thread takes the next group's
  packets from the demuxer (under a lock), decodes them, and comes back for
  more, so every core stays busy even when one of them is slowed down by other
  work. PyAV releases the GIL while reading and decoding. One demuxer rather
  than one per worker because FFmpeg's demuxer holds a table of every sample
  (~40-70 bytes per frame, about 100 MB for 20 hours at 25 fps): one per
  worker would make memory grow with the video's length. A group with more
  than ``_CHUNK_BYTES`` of packets (rare keyframes) is decoded while it is
  read, its thread keeping the demuxer meanwhile, rather than collected first.
* Only targets are converted to RGB, scaled to the output size in the same
  swscale pass (the consumer's size, :mod:`.size`: never a source-sized RGB
  array first), into the output array, turned as the display matrix says
  (a phone's portrait video is stored landscape).

Memory: the output (``len(plan) x H x W x 3``), the packet index (8 bytes per frame, plus the demuxer's
table; the index pass briefly needs 8 more), and per worker one decoder and at most ``_CHUNK_BYTES`` of
compressed packets, whatever the video's length.

A decode error, a target past the end of the stream or one that never comes is
reported as a :class:`~medhorizon_tasks.core.errors.VideoError` naming the item and path.
"""

from __future__ import annotations

import os
import threading
from array import array
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

import numpy as np

from ..errors import VideoError
from ..sampling import FramePlan, VideoMeta
from .share import process_share
from .size import SizeRule

__all__ = ["VideoIndex", "index_video", "decode_plan", "output_size", "target_size", "available_cores"]

# Codecs whose non-reference pictures are skipped while decoding towards a
# target. H.264 only: HEVC's "_N" pictures may still be referenced by a higher
# temporal sub-layer, so skipping them would not be exact there.
_SKIP_NONREF_CODECS = frozenset({"h264"})

# How a demuxer seeks: by presentation time through an index (mp4 says so with AVFMT_SEEK_TO_PTS; mkv's
# cues hold presentation times too), or, for the formats with AVFMT_TS_DISCONT (MPEG-TS, MPEG-PS), by a
# search over decode times, which for a keyframe followed by B-frames are earlier than its presentation
# time. A seek by presentation time that overshoots switches the file's seeks to decode times.
_AVFMT_SEEK_TO_PTS = 0x4000000
_AVFMT_TS_DISCONT = 0x200

# Packets read beyond the index's bound before a missing target is reported: slack for a demuxer that
# splits or merges a packet differently after a seek than in the index pass.
_BUDGET_MARGIN = 16

# A group's packets are collected (the shared demuxer held only meanwhile) up to this much; a longer
# group is decoded while it is read.
_CHUNK_BYTES = 64 << 20
_CHUNK_PACKETS = 4096

# Lead-in: packets read past the last lead-in picture (and past the first keyframe when there is none)
# before deciding; a decoder's reordering never spans more. A stream with no keyframe in its first
# _LEAD_IN_LIMIT packets is left undecided: its lead-in is taken to be shown, as every packet was before.
_LEAD_IN_WINDOW = 32
_LEAD_IN_LIMIT = 2000


@dataclass(frozen=True)
class VideoIndex:
    """Presentation timestamps (stream time base) of every frame, the keyframes, and the display rotation.

    Frame ``i`` is the ``i``-th frame a plain decode from the file's start outputs; packets no decoder
    shows (edit-list discards, an undecodable lead-in) are not frames, but may be keyframes. ``key_pts``,
    ``key_dts`` and ``key_packets`` describe the keyframe packets, sorted by ``key_pts`` (``None`` in an
    index made by hand: the frames at ``key_positions`` are the keyframes then).
    """

    pts: np.ndarray            # int64, sorted: pts[i] is frame i
    key_positions: np.ndarray  # int64, sorted frame positions where a keyframe's GOP starts
    time_base: float
    fps: float
    width: int                 # decoded picture size, before rotation
    height: int
    rotation: int = 0          # 0, 90, 180 or 270: degrees a player turns the decoded picture clockwise
    key_pts: np.ndarray | None = None      # int64
    key_dts: np.ndarray | None = None      # int64 (MPEG-TS seeks by decode time)
    key_packets: np.ndarray | None = None  # int64: number in decode order among the packets with a timestamp
    first_packet: tuple[int, int] | None = None  # (pts, dts) of the first packet, where a plain decode starts
    packet_slack: int = 64     # max over frames of (decode-order number - frame position)

    @property
    def num_frames(self) -> int:
        return int(len(self.pts))

    @property
    def display_size(self) -> tuple[int, int]:
        """(width, height) as shown, after the rotation."""
        return (self.height, self.width) if self.rotation in (90, 270) else (self.width, self.height)

    def meta(self) -> VideoMeta:
        """What the planner needs. A constant-frame-rate video (every frame one tick step after the
        previous) is described by its exact rate alone, so the planner does not hold one float per frame;
        otherwise the real frame times are passed on."""
        steps = np.diff(self.pts)
        if len(steps) and steps[0] > 0 and np.all(steps == steps[0]):
            return VideoMeta(self.num_frames, 1.0 / (float(steps[0]) * self.time_base))
        times = (self.pts - self.pts[0]) * self.time_base
        return VideoMeta(self.num_frames, self.fps, tuple(times.tolist()))

    def _keyframes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
        """(key_pts, key_dts, key_packets, first_packet), filled in for an index made by hand."""
        if self.key_pts is None:
            key_pts = self.pts[self.key_positions]
            keys = (key_pts, key_pts, np.asarray(self.key_positions, dtype=np.int64))
        else:
            keys = (self.key_pts, self.key_dts, self.key_packets)
        first = self.first_packet or (int(self.pts[0]), int(self.pts[0]))
        return (*keys, first)


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
    """Read every packet's timestamp (decoding only a lead-in, if any, and the first keyframe)."""
    path = Path(path)
    container = open_video(path, uid)
    try:
        return _index(container, path, uid)
    finally:
        container.close()


def _index(container, path: Path, uid: str | None) -> VideoIndex:
    stream = container.streams.video[0]
    # Compact arrays: a list of ints costs ~5x more for a 20-hour video. A packet's number (its position
    # in decode order) is its position in `dec`.
    dec, hidden = array("q"), array("q")
    key_pts, key_dts, key_packets = array("q"), array("q"), array("q")
    lead_in = _LeadIn(stream)
    offer, lead_in_open = lead_in.offer, True
    try:
        for packet in container.demux(stream):  # the hot loop of the pass: no attribute read it can spare
            t = packet.pts
            if t is None or packet.size == 0:
                continue
            if packet.is_discard:
                hidden.append(len(dec))
            if packet.is_keyframe:
                dts = packet.dts
                key_pts.append(t)
                key_dts.append(t if dts is None else dts)
                key_packets.append(len(dec))
            if lead_in_open:
                lead_in_open = offer(packet, len(dec))
            dec.append(t)
        hidden.extend(lead_in.finish())
    except Exception as exc:
        raise VideoError(f"video is unreadable or truncated while indexing ({type(exc).__name__}: {exc})",
                         path=str(path), uid=uid) from None

    frames = np.frombuffer(dec, dtype=np.int64)
    numbers = None  # decode-order number of each entry of `frames`; None: its position
    if len(hidden):
        shown = np.ones(len(frames), dtype=bool)
        shown[np.frombuffer(hidden, dtype=np.int64)] = False
        numbers = np.flatnonzero(shown)
        frames = frames[shown]
    if not len(frames):
        raise VideoError("video stream has no frames", path=str(path), uid=uid)
    order = np.argsort(frames, kind="stable")
    slack = _slack(order if numbers is None else numbers[order])
    del order, numbers
    frames.sort()  # in place (in the packet array's own buffer when nothing is hidden): no copy

    keys = np.argsort(np.frombuffer(key_pts, dtype=np.int64), kind="stable")
    k_pts = np.frombuffer(key_pts, dtype=np.int64)[keys]
    key_positions = np.unique(np.searchsorted(frames, k_pts))
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    fps = float(rate) if rate else 0.0
    if fps <= 0:
        span = (frames[-1] - frames[0]) * float(stream.time_base)
        fps = (len(frames) - 1) / span if span > 0 else 1.0
    return VideoIndex(frames, key_positions[key_positions < len(frames)].astype(np.int64),
                      float(stream.time_base), fps, stream.codec_context.width, stream.codec_context.height,
                      rotation=lead_in.rotation, key_pts=k_pts,
                      key_dts=np.frombuffer(key_dts, dtype=np.int64)[keys],
                      key_packets=np.frombuffer(key_packets, dtype=np.int64)[keys],
                      first_packet=lead_in.first_packet, packet_slack=slack)


def _slack(numbers: np.ndarray) -> int:
    """max(numbers[i] - i): how far behind its presentation position a frame's packet can come."""
    slack, step = 0, 1 << 20  # in slices: an arange as long as a 20-hour video would cost 14 MB more
    for start in range(0, len(numbers), step):
        part = numbers[start:start + step]
        slack = max(slack, int((part - np.arange(start, start + len(part))).max()))
    return slack


class _LeadIn:
    """Which of a stream's first packets a plain decode shows, and the display rotation.

    Lead-in pictures: those before the first keyframe in decode order, and those after it shown before it
    (an open GOP's leading pictures). Usually there are none, and only the first keyframe is decoded, for
    the rotation. Otherwise the stream's own decoder decodes from the first packet, as a plain decode
    does, on past the last lead-in picture and the first keyframe; lead-in pictures that did not come out
    are not frames. The stream's decoder because only it carries the container's display matrix.
    """

    def __init__(self, stream):
        self.stream = stream
        self.complete = True  # False: stopped at _LEAD_IN_LIMIT, undecided
        self.key: int | None = None       # pts of the first keyframe
        self.key_packet = None
        self.candidates: dict[int, int] = {}  # pts -> packet number of each lead-in picture
        self.shown: set[int] = set()
        self.pending: list = []           # the packets so far, while no lead-in picture is known
        self.decoding = False
        self.last = -1                    # number of the last lead-in picture or of the first keyframe
        self.rotation: int | None = None
        self.first_packet: tuple[int, int] | None = None  # (pts, dts)

    def offer(self, packet, number: int) -> bool:
        """Look at the next packet; False once no later packet matters."""
        if self.first_packet is None:
            self.first_packet = (packet.pts, packet.pts if packet.dts is None else packet.dts)
        if self.key is None and packet.is_keyframe:
            self.key, self.key_packet, self.last = packet.pts, packet, number
        if not packet.is_discard and (self.key is None or packet.pts < self.key):
            self.candidates[packet.pts] = number
            self.last = number
            if not self.decoding:
                self.decoding = True
                for earlier in self.pending:
                    self._feed(earlier)
                self.pending = []
        if self.decoding:
            self._feed(packet)
        else:
            self.pending.append(packet)
        if self.key is not None and number - self.last >= _LEAD_IN_WINDOW:
            return False
        if number + 1 >= _LEAD_IN_LIMIT:
            self.complete = False
            return False
        return True

    def finish(self) -> list[int]:
        """Numbers of the lead-in packets that are not frames."""
        self.pending = []
        hidden = []
        if self.decoding:
            self._drain()
            if self.complete:
                hidden = [number for pts, number in self.candidates.items() if pts not in self.shown]
        if self.rotation is None and self.key_packet is not None:
            self._feed(self._unhidden(self.key_packet))
            self._drain()
        self.rotation = self.rotation or 0
        return hidden

    @staticmethod
    def _unhidden(packet):
        """``packet``, or a copy without the discard flag an edit list set: only the decoded frame's side
        data is wanted here, and a discarded picture would not come out of the decoder at all."""
        import av

        if not packet.is_discard:
            return packet
        copy = av.Packet(bytes(packet))
        copy.pts, copy.dts, copy.time_base, copy.is_keyframe = packet.pts, packet.dts, packet.time_base, True
        return copy

    def _feed(self, packet) -> None:
        import av

        context = self.stream.codec_context
        if not context.is_open:
            context.thread_count = 1  # as the workers decode
        try:
            self._shown(context.decode(packet))
        except av.error.FFmpegError:
            pass  # a lead-in picture without its references may fail: it is not shown

    def _drain(self) -> None:
        import av

        try:
            self._shown(self.stream.codec_context.decode(None))
        except av.error.FFmpegError:
            pass
        self.stream.codec_context.flush_buffers()

    def _shown(self, frames) -> None:
        for frame in frames:
            if self.rotation is None:
                self.rotation = _clockwise(frame.rotation)
            if frame.pts is not None:
                self.shown.add(frame.pts)


def _clockwise(rotation) -> int:
    """FFmpeg's display rotation (counter-clockwise degrees, -180..180) as 0/90/180/270 clockwise; a tilt
    that is not a quarter turn is not applied (as the ``ffmpeg`` tool does not)."""
    turn = -float(rotation or 0)
    quarter = round(turn / 90) * 90
    return int(quarter % 360) if abs(turn - quarter) < 1 else 0


def target_size(display: tuple[int, int], n: int, max_side: int | None = None,
                size: SizeRule | tuple[int, int] | None = None) -> tuple[int, int]:
    """(width, height) of ``n`` displayed frames of a ``display``-sized source under ``size`` / ``max_side``."""
    if size is None:
        return output_size(*display, max_side)
    w, h = size if isinstance(size, tuple) else size.size(n, *display)
    if w < 1 or h < 1:
        raise ValueError(f"frame size {w}x{h} is not a size")
    return int(w), int(h)


def output_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Frame size after shrinking so the longer side is at most ``max_side`` (never enlarged; even sizes)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(2, int(round(width * scale / 2)) * 2), max(2, int(round(height * scale / 2)) * 2)


def available_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``: a batch job's share, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def decode_plan(path: str | os.PathLike, plan: FramePlan, *, max_side: int | None = None,
                uid: str | None = None, expected_frames: int | None = None,
                index: VideoIndex | None = None, workers: int | None = None,
                size: SizeRule | tuple[int, int] | None = None, stats: dict | None = None) -> np.ndarray:
    """The plan's frames as an ``(len(plan), H, W, 3)`` uint8 RGB array, in plan order, as displayed
    (turned by the video's display rotation).

    The displayed frame's size: ``size``, a ``(width, height)`` or a rule (:mod:`.size`) asked with the plan's
    length and the displayed source size; else ``max_side`` bounds its longer side; else the source size.
    Frames are scaled while they are converted to RGB (one swscale pass): no array at the source size is made.
    ``expected_frames`` is the frame count the data claims; a file with fewer
    frames is reported as truncated instead of silently giving other frames.
    ``workers``: decoder threads (default: this process's share of its node's cores, :mod:`.share`). ``stats``: gets
    ``decoded_frames``, the pictures decoded (``perf/`` compares it with the minimal count).
    """
    path = Path(path)
    container = open_video(path, uid)
    try:
        index = index or _index(container, path, uid)
        n = index.num_frames
        if expected_frames is not None and n < expected_frames and max(plan.indices, default=-1) >= n:
            raise VideoError(f"video is truncated: the data says {expected_frames} frames, the file has {n}",
                             path=str(path), uid=uid)
        w, h = target_size(index.display_size, len(plan), max_side, size)
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
        keys = index._keyframes()
        groups = _groups(index, keys, wanted)
        n_workers = max(1, min(workers or process_share().threads, len(groups)))
        stream = container.streams.video[0]
        decoders = [_Decoder(stream.codec_context, rows, out, index.rotation, path, uid) for _ in range(n_workers)]
        _decode_in_threads(groups, _Demuxer(container, stream, keys, path, uid), decoders)
        if stats is not None:
            stats["decoded_frames"] = sum(d.decoded for d in decoders)
        return out
    finally:
        container.close()


class _Group(NamedTuple):
    """Targets (sorted frame positions, and their timestamps) decoded after one seek to keyframe ``key``
    (the one that opens their GOP; -1: the stream's first packet, for frames shown before any keyframe)."""

    key: int
    targets: list[int]
    target_pts: list[int]
    budget: int  # packets with a timestamp, from the keyframe on, within which every target's packet comes


def _groups(index: VideoIndex, keys, wanted: np.ndarray) -> list[_Group]:
    key_pts, _, key_packets, _ = keys
    gop = np.searchsorted(key_pts, index.pts[wanted], side="right") - 1
    cuts = np.flatnonzero(np.diff(gop)) + 1
    groups = []
    for g, t in zip(np.split(gop, cuts), np.split(wanted, cuts)):
        key = int(g[0])
        start = int(key_packets[key]) if key >= 0 else 0
        # Frame t's packet is at most number t + slack; the keyframe's is `start`.
        budget = max(1, int(t[-1]) + index.packet_slack - start + 1) + _BUDGET_MARGIN
        groups.append(_Group(key, t.tolist(), index.pts[t].tolist(), budget))
    return groups


class _Demuxer:
    """The file's one demuxer: each group's packets, from its keyframe on (see the module docstring)."""

    def __init__(self, container, stream, keys, path: Path, uid: str | None):
        self.container, self.stream, self.path, self.uid = container, stream, path, uid
        self.key_pts, self.key_dts, _, self.first_packet = keys
        flags = container.format.flags
        self.by_pts = bool(flags & _AVFMT_SEEK_TO_PTS or not flags & _AVFMT_TS_DISCONT)

    def packets(self, group: _Group) -> Iterator:
        """The group's packets in decode order: its keyframe, and on up to its last target's packet.
        Ends early at the end of the stream (the decoder then reports what is missing)."""
        import av

        unseen = set(group.target_pts)
        try:
            demux, packet = self._find(group)
            counted = 0
            while True:
                yield packet
                if packet.pts is not None:
                    unseen.discard(packet.pts)
                    counted += 1
                if not unseen:
                    return
                if counted >= group.budget:
                    missing = [t for t, p in zip(group.targets, group.target_pts) if p in unseen]
                    raise VideoError(f"frames {missing[:5]} did not come within {counted} packets of their keyframe "
                                     "(corrupt video, or an index made from another file)",
                                     path=str(self.path), uid=self.uid)
                packet = next(demux, None)
                if packet is None or packet.size == 0:  # the end of the stream
                    return
        except av.error.FFmpegError as exc:
            raise VideoError(f"video is corrupt or truncated near frame {group.targets[0]} "
                             f"({type(exc).__name__}: {exc})", path=str(self.path), uid=self.uid) from None

    def _find(self, group: _Group):
        """Seek to the group's keyframe; (the demuxer, the keyframe's packet)."""
        import av

        if group.key >= 0:
            target_pts, target_dts = int(self.key_pts[group.key]), int(self.key_dts[group.key])
        else:
            target_pts, target_dts = self.first_packet
        by_pts = group.key >= 0 and self.by_pts and target_pts != target_dts
        for attempt, timestamp in enumerate(self._seek_targets(group.key)):
            if attempt == 1 and by_pts:
                self.by_pts = False  # seeking to the presentation time overshot: this demuxer seeks by decode time
            try:
                if timestamp is None:
                    self.container.seek(0, unsupported_byte_offset=True)
                else:
                    self.container.seek(timestamp, stream=self.stream, backward=True, any_frame=False)
            except av.error.FFmpegError:
                continue  # this demuxer cannot seek this way (mp4 by bytes): try the next
            demux = self.container.demux(self.stream)
            for packet in demux:
                if packet.size == 0:
                    break
                if packet.pts == target_pts:
                    return demux, packet
                if packet.pts is None and packet.dts is None:
                    continue
                # Before the keyframe in decode order: skip. Past it: the seek overshot, seek earlier.
                # (Nothing precedes the first packet: anything else there is an overshoot.)
                if group.key < 0 or (packet.dts is not None and packet.dts > target_dts) or (
                        packet.pts is not None and packet.pts > target_pts):
                    break
        raise VideoError(f"frames {group.targets[:5]} could not be decoded: no seek reached their keyframe "
                         "(truncated or corrupt video)", path=str(self.path), uid=self.uid)

    def _seek_targets(self, key: int) -> Iterator[int | None]:
        """Timestamps to seek to for keyframe ``key``, each earlier than the one before; None: byte 0."""
        tried = set()
        candidates = []
        if key >= 0:
            candidates += [int(self.key_pts[key]) if self.by_pts else int(self.key_dts[key]), int(self.key_dts[key])]
            step = 1
            while key - step >= 0:  # back by 1, 2, 4, ... keyframes
                candidates.append(int(self.key_dts[key - step]))
                step *= 2
        candidates += [min(self.first_packet), None]
        for timestamp in candidates:
            if timestamp not in tried:
                tried.add(timestamp)
                yield timestamp


def _chunks(packets: Iterator, release: Callable[[], None]) -> Iterator[list]:
    """``packets`` in lists of at most ``_CHUNK_BYTES``; ``release()`` once the last packet has been read."""
    while True:
        chunk, size, more = [], 0, False
        for packet in packets:
            chunk.append(packet)
            size += packet.size
            if size >= _CHUNK_BYTES or len(chunk) >= _CHUNK_PACKETS:
                more = True
                break
        if not more:
            release()
        yield chunk
        if not more:
            return


class _Decoder:
    """A single-threaded decoder configured like the stream's own, writing targets into ``out``.

    Decoders are created fresh (rather than one container per worker) so that all workers share one
    demuxer; the stream's codec parameters are copied over so every worker decodes exactly as the
    stream's own decoder would (same extradata, and the container's colour description, which the RGB
    conversion reads).
    """

    _COPIED = ("width", "height", "pix_fmt", "bits_per_coded_sample", "codec_tag",
               "color_range", "color_primaries", "color_trc", "colorspace")

    def __init__(self, template, rows: dict[int, list[int]], out: np.ndarray, rotation: int, path: Path,
                 uid: str | None):
        import av

        self.context = av.CodecContext.create(template.codec)
        self.context.extradata = template.extradata
        for name in self._COPIED:
            value = getattr(template, name)
            if value is not None:
                setattr(self.context, name, value)
        self.context.thread_count = 1  # the workers already use the cores; FFmpeg threads would only contend
        self.skip_nonref = template.name in _SKIP_NONREF_CODECS
        self.rows, self.out, self.path, self.uid, self.decoded = rows, out, path, uid, 0
        self.turns = -(rotation // 90)  # np.rot90 turns counter-clockwise
        h, w = out.shape[1:3]
        self.size = (h, w) if rotation in (90, 270) else (w, h)  # (width, height) before turning

    def decode(self, group: _Group, chunks: Iterator[list]) -> None:
        import av

        context = self.context
        remaining = set(group.target_pts)
        try:
            for chunk in chunks:
                for packet in chunk:
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
        w, h = self.size
        for frame in frames:
            self.decoded += 1
            if frame.pts not in remaining:
                continue
            remaining.discard(frame.pts)
            first, *others = self.rows[frame.pts]
            image = _rgb(frame, w, h)
            self.out[first] = np.rot90(image, self.turns) if self.turns else image
            for row in others:
                self.out[row] = self.out[first]


def _rgb(frame, width: int, height: int) -> np.ndarray:
    """The frame as a ``(height, width, 3)`` RGB array, scaled and converted in one swscale pass (the only place a
    decoded picture becomes an array: a source-sized RGB array is never made for a smaller output)."""
    if frame.width == width and frame.height == height:
        return frame.to_ndarray(format="rgb24")
    return frame.to_ndarray(width=width, height=height, format="rgb24")


def _decode_in_threads(groups: list[_Group], demuxer: _Demuxer, decoders: list[_Decoder]) -> None:
    """One thread per decoder; each takes the next group from the shared demuxer (one at a time, under a
    lock) and decodes it. Re-raises the first error; after an error the others stop after their group."""
    demux_lock = threading.Lock()
    stop = threading.Event()
    pending = iter(groups)

    def run(decoder: _Decoder) -> None:
        try:
            while not stop.is_set():
                demux_lock.acquire()
                held = [True]

                def release() -> None:
                    if held[0]:
                        held[0] = False
                        demux_lock.release()

                try:
                    group = next(pending, None)
                    if group is None:
                        return
                    # Reading happens as the decoder takes the first chunk; a long group keeps the lock
                    # until its last chunk is read.
                    decoder.decode(group, _chunks(demuxer.packets(group), release))
                finally:
                    release()
        except BaseException:
            stop.set()
            raise

    if len(decoders) == 1:
        run(decoders[0])
        return
    with ThreadPoolExecutor(len(decoders), thread_name_prefix="decode_plan") as pool:
        futures = [pool.submit(run, decoder) for decoder in decoders]
        try:
            for future in futures:
                future.result()
        finally:
            stop.set()  # on Ctrl-C in this thread too
