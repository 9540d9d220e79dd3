"""Frame admission speed and memory: our exact decoder against the readers other harnesses use, and
against the decode work no exact reader can avoid.

Usage::

    python perf/decode_speed.py            # 2-hour 320x240 video, caps 64/512/1248, 3 runs (~12 min here)
    python perf/decode_speed.py --runs 5   # what the README's table reports (~17 min here)
    python perf/decode_speed.py --quick    # 10-minute video, 1 run (smoke use, a few minutes)

(This is the script issue 22 calls ``benchmarks/decode.py``: the top-level ``benchmarks/`` folder became
``perf/``.) Linux only (peak memory is read from /proc). Test videos are generated once
with PyAV (libx264 ``ultrafast``, a keyframe every 250 frames) and kept in
``~/.cache/medhorizon_tasks/bench/``. Content: a window panning over a smooth
random texture, the frame's index stamped as a row of binary blocks, so every
frame differs from its neighbours. The main video has 3 B-frames per P-frame,
as most recorders produce (``ultrafast`` alone makes none).

Frames: MedHorizon's rule, the 1 FPS grid over the whole video uniformly capped
to C (``plan_frames(index_video(v).meta(), FpsCap(1, C))``). Every reader gets
the same frame indices. Each timed read runs in a fresh process, so its peak
RSS is its own; runs are interleaved across readers so that load from other
work on the machine spreads over all of them, and each reader's fastest run is
reported (such load only ever slows a read down; on a shared 2-core machine a
median still moves by tens of percent between invocations):

* ours, warm index: ``stored_index`` (the file's identity, remembered, and its
  packet index, read from the index store the pre-flight filled) +
  ``decode_plan``. This is every decode after a run's pre-flight: the headline.
* ours, cold: the same with an empty index store and identity database, so the
  read also hashes the file, makes the packet pass and stores the index: a
  video's first use (the pre-flight's work, then the decode).
* lmms-eval 0.7.3 (PyAV, its default backend): for an mp4 its ``read_video``
  opens the container with ``thread_type="AUTO"``, calls
  ``record_video_length_stream(container, indices)`` (decodes every frame from
  the start up to the last index, keeps the listed ones) and converts those
  with ``to_ndarray("rgb24")``. We run exactly that with our indices:
  ``read_video(num_frm=C)`` itself would choose ``linspace(0, N-1, C)``
  instead, and decode just as much.
* decord: ``VideoReader(path).get_batch(indices).asnumpy()``, as VLMEvalKit
  reads video. Optional: ``pip install decord``.
* torchcodec, exact and approximate seek modes:
  ``VideoDecoder(path, seek_mode=..., num_ffmpeg_threads=0,
  dimension_order="NHWC").get_frames_at(indices)``. lmms-eval's
  ``LMMS_VIDEO_DECODE_BACKEND=torchcodec`` makes the same call in exact mode,
  but with torchcodec's default of one FFmpeg thread unless
  ``LMMS_VIDEO_TORCHCODEC_THREADS`` is set; 0 (FFmpeg chooses) is faster, so
  that is the peer measured. Optional, and not a dependency of this package:
  ``pip install --no-deps torchcodec`` beside torch, plus FFmpeg's shared
  libraries (``apt-get install ffmpeg``).
* decode-work bound: only the decoding exact admission cannot avoid. Before
  the clock starts, the packets each group of targets needs (from the keyframe
  opening the targets' GOP up to the last target's packet, in decode order) are
  read into memory; timed: decoding them on as many threads as ours uses, each
  thread with its stream's own decoder, skipping pictures nothing refers to
  unless they are targets (H.264 ``skip_frame=NONREF``; an exact reader need not
  decode them), converting only the targets to RGB. No demuxing, seeking,
  indexing or file identity: what ours adds to it is overhead.
* cache hit: ``cached_decode`` on a warm :class:`FrameCache`.

Agreement: every target frame of every reader (the bound included) is compared
(sha1) with a plain full sequential PyAV decode (frame i = the i-th frame it
outputs).

The last lines print our speed-up against the FASTEST peer (lmms-eval, decord,
torchcodec exact or approximate) at every cap, with a warm index (goal: at
least 4x), and our time over the decode-work bound (goal: at most 1.3x).

Memory against video length: 20-hour 64x48 25 fps videos (1.8 M frames; a
10-minute encoded segment repeated by remuxing, so generation takes seconds),
without and with B-frames (the latter get an mp4 edit list), through our reader
(cold: its packet pass included) at the headline cap, beside the main video.
``av.open`` alone is measured too: FFmpeg's demuxer keeps a table of every
sample, which no reader avoids.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

BENCH_DIR = Path.home() / ".cache" / "medhorizon_tasks" / "bench"
GENERATOR_VERSION = 1  # part of the file names: bump when the generated content changes
READERS = ("ours", "ours_cold", "lmms", "decord", "torchcodec", "torchcodec_approx", "bound", "cache")
PEERS = ("lmms", "decord", "torchcodec", "torchcodec_approx")
LABELS = {"ours": "ours, warm index: stored_index + decode_plan",
          "ours_cold": "ours, cold: hash + index + store + decode",
          "lmms": "lmms-eval read_video path (PyAV)", "decord": "decord get_batch (VLMEvalKit)",
          "torchcodec": "torchcodec exact, threads auto", "torchcodec_approx": "torchcodec approximate, threads auto",
          "bound": "decode-work bound", "cache": "ours: cache hit (cached_decode)", "open": "av.open alone"}
GOAL_SPEEDUP, GOAL_BOUND = 4.0, 1.3  # issue 22: >= 4x the fastest peer, <= 1.3x the decode-work bound


@dataclasses.dataclass(frozen=True)
class Setup:
    seconds: int = 7200
    width: int = 320
    height: int = 240
    fps: int = 25
    gop: int = 250
    bframes: int = 3
    caps: tuple[int, ...] = (64, 512, 1248)
    headline_cap: int = 512
    runs: int = 3
    readers: tuple[str, ...] = READERS
    # Long, tiny videos for the memory check: `long_copies` copies of a `long_segment_s` segment,
    # one video per B-frame setting in `long_bframes`.
    long_size: tuple[int, int] = (64, 48)
    long_segment_s: int = 600
    long_copies: int = 120
    long_bframes: tuple[int, ...] = (0, 3)
    directory: Path = BENCH_DIR


FULL = Setup()
QUICK = dataclasses.replace(FULL, seconds=600, runs=1, long_copies=12)


# ----------------------------------------------------------------- test videos

def _smooth_texture(height: int, width: int, seed: int) -> np.ndarray:
    """A uint8 plane of blurred blocky noise: detail an encoder must spend bits on, but not white noise."""
    rng = np.random.default_rng(seed)
    cell = 16
    coarse = rng.integers(0, 256, (height // cell + 2, width // cell + 2)).astype(np.float64)
    blocky = np.repeat(np.repeat(coarse, cell, 0), cell, 1)
    # Box blur of size `cell` via a summed-area table.
    sat = np.pad(blocky.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    blur = (sat[cell:, cell:] - sat[:-cell, cell:] - sat[cell:, :-cell] + sat[:-cell, :-cell]) / cell**2
    return blur[:height, :width].astype(np.uint8)


def _encode(path: Path, n_frames: int, fps: int, width: int, height: int, gop: int, bframes: int) -> None:
    """Pan a window over a texture twice the frame size; stamp each frame's index as a row of binary blocks."""
    import av

    tex_y = _smooth_texture(2 * height, 2 * width, 1)
    tex_u = _smooth_texture(height, width, 2) // 4 + 96  # mild colours: chroma near neutral grey
    tex_v = _smooth_texture(height, width, 3) // 4 + 96
    bit_w, bit_h, n_bits = max(2, width // 24), max(2, height // 30), 24
    buf = np.empty((height * 3 // 2, width), np.uint8)  # yuv420p: Y rows, then U and V packed two rows per line
    h4 = height // 4
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=Fraction(fps), options={
            "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0",  # a keyframe every `gop` frames exactly
            "preset": "ultrafast", "crf": "23", "x264-params": f"bframes={bframes}:b-adapt=0",
        })
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(n_frames):
            dx = int(width / 2 * (1 + np.sin(i / 97.0)))
            dy = int(height / 2 * (1 + np.cos(i / 131.0)))
            buf[:height] = tex_y[dy:dy + height, dx:dx + width]
            bits = (i >> np.arange(n_bits)) & 1
            buf[:bit_h, :bit_w * n_bits] = np.repeat(bits * 255, bit_w)[None, :]
            buf[height:height + h4] = tex_u[dy // 2:dy // 2 + height // 2, dx // 2:dx // 2 + width // 2].reshape(h4, width)
            buf[height + h4:] = tex_v[dy // 2:dy // 2 + height // 2, dx // 2:dx // 2 + width // 2].reshape(h4, width)
            frame = av.VideoFrame.from_ndarray(buf, format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def _repeat(segment: Path, path: Path, copies: int) -> None:
    """Write ``copies`` copies of ``segment`` back to back by remuxing its packets with shifted timestamps."""
    import av

    with av.open(str(segment)) as src:
        s_in = src.streams.video[0]
        packets = [(bytes(p), p.pts, p.dts, p.duration, p.is_keyframe) for p in src.demux(s_in) if p.size]
        pts = sorted(p[1] for p in packets)
        span = len(pts) * (pts[1] - pts[0])  # constant frame rate: copy r starts r * span ticks later
        with av.open(str(path), "w", format="mp4") as out:
            s_out = out.add_stream_from_template(s_in)
            for r in range(copies):
                for data, p_pts, p_dts, duration, key in packets:
                    packet = av.Packet(data)
                    packet.pts, packet.dts, packet.duration = p_pts + r * span, p_dts + r * span, duration
                    packet.is_keyframe = key
                    packet.time_base, packet.stream = s_in.time_base, s_out
                    out.mux(packet)


def _cached_file(path: Path, make) -> Path:
    """``path``, made by ``make(tmp_path)`` first if it does not exist (atomically: an interrupted run
    leaves no half-written video behind under the final name)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".gen-", suffix=".mp4")
    os.close(fd)
    t0 = time.perf_counter()
    try:
        make(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"generated {path} in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def bench_video(seconds: int, *, fps: int = 25, width: int = 320, height: int = 240, gop: int = 250,
                bframes: int = 3, directory: Path = BENCH_DIR) -> Path:
    name = f"pan_v{GENERATOR_VERSION}_{width}x{height}_{fps}fps_{seconds}s_gop{gop}_bf{bframes}.mp4"
    return _cached_file(directory / name, lambda tmp: _encode(tmp, seconds * fps, fps, width, height, gop, bframes))


def long_video(segment_s: int, copies: int, *, fps: int = 25, width: int = 64, height: int = 48, gop: int = 250,
               bframes: int = 3, directory: Path = BENCH_DIR) -> Path:
    segment = bench_video(segment_s, fps=fps, width=width, height=height, gop=gop, bframes=bframes,
                          directory=directory)
    return _cached_file(directory / f"{segment.stem}_x{copies}.mp4", lambda tmp: _repeat(segment, tmp, copies))


# ----------------------------------------------------------------- readers (each returns (N, H, W, 3) uint8)

def read_ours(video: Path, indices: list[int], parts: dict) -> np.ndarray:
    """Our admission: the index from the store (built and stored first when the store is empty), then the
    decode. ``parts["index_seconds"]``: the time to the index."""
    from medhorizon_tasks.core.sampling import FramePlan
    from medhorizon_tasks.core.video.decode import decode_plan
    from medhorizon_tasks.core.video.index_store import stored_index

    t0 = time.perf_counter()
    index = stored_index(video)
    parts["index_seconds"] = time.perf_counter() - t0
    return decode_plan(video, FramePlan(tuple(indices), (), "bench"), index=index)


def read_lmms(video: Path, indices: list[int]) -> np.ndarray:
    import av
    from lmms_eval.models.model_utils.load_video import record_video_length_stream

    # lmms_eval.models.model_utils.load_video.read_video (pyav backend, an mp4), with our indices.
    container = av.open(str(video))
    container.streams.video[0].thread_type = "AUTO"
    try:
        frames = record_video_length_stream(container, np.asarray(indices))
        output = np.empty((len(frames), *frames[0].to_ndarray(format="rgb24").shape), dtype=np.uint8)
        for i, frame in enumerate(frames):
            output[i] = frame.to_ndarray(format="rgb24")
        return output
    finally:
        container.close()


def read_decord(video: Path, indices: list[int]) -> np.ndarray:
    from decord import VideoReader

    return VideoReader(str(video)).get_batch(list(indices)).asnumpy()


def read_torchcodec(video: Path, indices: list[int], seek_mode: str) -> np.ndarray:
    from torchcodec.decoders import VideoDecoder

    decoder = VideoDecoder(str(video), seek_mode=seek_mode, num_ffmpeg_threads=0, dimension_order="NHWC")
    return decoder.get_frames_at(indices=list(indices)).data.numpy()


def read_cached(video: Path, indices: list[int], cache_root: Path) -> np.ndarray:
    from medhorizon_tasks.core.sampling import FramePlan
    from medhorizon_tasks.core.video.frame_cache import FrameCache, cached_decode

    return cached_decode(video, FramePlan(tuple(indices), (), "bench"), cache=FrameCache(cache_root))


def open_only(video: Path) -> None:
    import av

    av.open(str(video)).close()


# ----------------------------------------------------------------- the decode-work bound

def bound_work(video: Path, indices: list[int]) -> tuple[list[list], dict[int, list[int]], tuple[int, int], list]:
    """Untimed setup of the bound: ``(groups, rows, (height, width), containers)``. A group is the packets,
    in decode order, from the keyframe that opens some targets' GOP (in presentation order) to the last of
    those targets' packets; ``rows`` maps a target's timestamp to its output rows; one open container per
    decoding thread (``decode_plan``'s default number), for its stream's decoder."""
    import av

    from medhorizon_tasks.core.video.decode import index_video

    index = index_video(video)
    rows: dict[int, list[int]] = {}
    for row, frame in enumerate(indices):
        rows.setdefault(int(index.pts[frame]), []).append(row)
    key_pts = np.sort(index._keyframes()[0])
    with av.open(str(video)) as container:  # pass 1: every packet's timestamp and keyframe flag
        stream = container.streams.video[0]
        packets = [(p.pts, p.is_keyframe) for p in container.demux(stream) if p.size and p.pts is not None]
    number_of_key = {pts: n for n, (pts, key) in enumerate(packets) if key}
    spans: dict[int, list[int]] = {}  # keyframe's packet number -> [first, last] packet number to decode
    for n, (pts, _) in enumerate(packets):
        if pts in rows:
            key = np.searchsorted(key_pts, pts, side="right") - 1  # -1: shown before any keyframe
            start = number_of_key[int(key_pts[key])] if key >= 0 else 0
            span = spans.setdefault(start, [start, n])
            span[1] = max(span[1], n)
    keep = sorted(spans.values())
    groups: list[list] = [[] for _ in keep]
    with av.open(str(video)) as container:  # pass 2: the packets of each span, in memory
        n, g = -1, 0
        for packet in container.demux(container.streams.video[0]):
            if not packet.size or packet.pts is None:
                continue
            n += 1
            while g < len(keep) and n > keep[g][1]:
                g += 1
            if g == len(keep):
                break
            if n >= keep[g][0]:
                groups[g].append(packet)
    containers = [av.open(str(video)) for _ in range(max(1, min(2, os.cpu_count() or 1)))]
    return groups, rows, (index.height, index.width), containers


def read_bound(work: tuple) -> np.ndarray:
    """The timed part of the bound: decode each group's packets from memory on as many threads as
    ``decode_plan`` uses, each thread with its own stream's single-threaded decoder."""
    from concurrent.futures import ThreadPoolExecutor

    groups, rows, (height, width), containers = work
    out = np.empty((sum(len(r) for r in rows.values()), height, width, 3), dtype=np.uint8)
    pending, lock = iter(groups), threading.Lock()

    def next_group():
        with lock:
            return next(pending, None)

    def keep(frames) -> None:
        for frame in frames:
            where = rows.get(frame.pts)
            if where:
                out[where] = frame.to_ndarray(format="rgb24")

    def run(container) -> None:
        context = container.streams.video[0].codec_context
        context.thread_count = 1
        skip = context.name == "h264"
        while (group := next_group()) is not None:
            for packet in group:
                if skip:
                    context.skip_frame = "DEFAULT" if packet.pts in rows else "NONREF"
                keep(context.decode(packet))
            keep(context.decode(None))
            context.flush_buffers()

    try:
        with ThreadPoolExecutor(len(containers)) as pool:
            list(pool.map(run, containers))
    finally:
        for container in containers:
            container.close()
    return out


# Modules each reader imports, loaded before its RSS baseline is taken: import cost is not the read's.
_OURS = ("av", "medhorizon_tasks.core.video.decode", "medhorizon_tasks.core.video.index_store")
_TORCHCODEC = ("torch", "torchcodec.decoders")
_IMPORTS = {"ours": _OURS, "ours_cold": _OURS, "lmms": ("lmms_eval.models.model_utils.load_video",),
            "decord": ("decord",), "torchcodec": _TORCHCODEC, "torchcodec_approx": _TORCHCODEC,
            "bound": ("av", "medhorizon_tasks.core.video.decode"),
            "cache": ("medhorizon_tasks.core.video.frame_cache",), "open": ("av",)}
_INSTALL = {"decord": "pip install decord",
            "torchcodec": "pip install --no-deps torchcodec, and FFmpeg's shared libraries: apt-get install ffmpeg"}


@functools.lru_cache(maxsize=None)
def missing_reader(reader: str) -> str | None:
    """Why ``reader`` cannot run here, or None."""
    import importlib

    module = {"lmms": "lmms_eval", "decord": "decord", "torchcodec": "torchcodec",
              "torchcodec_approx": "torchcodec"}.get(reader)
    if module is None:
        return None
    how = f" ({_INSTALL[module]})" if module in _INSTALL else ""
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed{how}"
    if module == "torchcodec":  # installed is not enough: it loads FFmpeg's libraries on import
        try:
            importlib.import_module("torchcodec.decoders")
        except Exception as exc:  # RuntimeError / OSError from its loader
            return f"torchcodec cannot be loaded ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}){how}"
    return None


def _digests(frames: np.ndarray) -> list[str]:
    return [hashlib.sha1(np.ascontiguousarray(f).tobytes()).hexdigest()[:16] for f in frames]


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB, from /proc.

    Not ``getrusage``: its ``ru_maxrss`` survives ``exec``, so a fresh child reports its parent's peak
    when that is larger; ``VmHWM`` belongs to the process's own address space.
    """
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def measure(reader: str, video: Path, indices: list[int], cache_root: Path | None = None) -> dict:
    """Time one read in this process: seconds, RSS before the read and peak RSS (MB), frame digests, and
    the reader's own parts (``index_seconds`` for ours)."""
    import importlib

    for module in _IMPORTS[reader]:
        importlib.import_module(module)
    work = bound_work(video, indices) if reader == "bound" else None  # untimed: the packets, in memory
    parts: dict = {}
    call = {"ours": lambda: read_ours(video, indices, parts), "ours_cold": lambda: read_ours(video, indices, parts),
            "lmms": lambda: read_lmms(video, indices), "decord": lambda: read_decord(video, indices),
            "torchcodec": lambda: read_torchcodec(video, indices, "exact"),
            "torchcodec_approx": lambda: read_torchcodec(video, indices, "approximate"),
            "bound": lambda: read_bound(work),
            "cache": lambda: read_cached(video, indices, cache_root), "open": lambda: open_only(video)}[reader]
    base, _ = _rss_mb()
    t0 = time.perf_counter()
    frames = call()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "base_mb": base, "peak_mb": _rss_mb()[1],
            "digests": [] if frames is None else _digests(frames), **parts}


def measure_in_subprocess(reader: str, video: Path, indices: list[int] = (), cache_root: Path | None = None, *,
                          stores: Path | None = None) -> dict:
    """:func:`measure` in a fresh interpreter, so that its peak RSS belongs to this read alone. ``stores``: the
    folder of the index store and identity database it uses (None: new, empty ones: a cold read)."""
    if (why := missing_reader(reader)) is not None:
        return {"missing": why}
    with tempfile.TemporaryDirectory(prefix="decode-bench-") as tmp:
        where = Path(stores) if stores is not None else Path(tmp)
        env = {**os.environ, "MEDHORIZON_INDEX_CACHE": str(where / "index"),
               "MEDHORIZON_IDENTITY_DB": str(where / "identities.sqlite3")}
        (indices_file := Path(tmp) / "indices.json").write_text(json.dumps(list(indices)))
        cmd = [sys.executable, __file__, "--measure", reader, str(video), str(indices_file)]
        if cache_root is not None:
            cmd.append(str(cache_root))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{reader} failed on {video}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sequential_digests(video: Path, wanted: set[int]) -> dict[int, str]:
    """Digests of the ``wanted`` frames from a plain full decode: frame i is the i-th frame decoded."""
    import av

    found = {}
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for i, frame in enumerate(container.decode(stream)):
            if i in wanted:
                found[i] = _digests(frame.to_ndarray(format="rgb24")[None])[0]
    return found


def plan_indices(index, cap: int) -> list[int]:
    """The frames MedHorizon's rule admits at ``cap`` from a video with this :class:`VideoIndex`."""
    from medhorizon_tasks.core.sampling import FpsCap, plan_frames

    return list(plan_frames(index.meta(), FpsCap(1.0, cap)).indices)


# ----------------------------------------------------------------- the benchmark

def _describe(video: Path, index) -> str:
    seconds = round(index.meta().duration_s)
    return (f"{video.name}: {seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}, "
            f"{index.width}x{index.height}, {index.fps:g} fps, {index.num_frames:,} frames, "
            f"{len(index.key_positions):,} keyframes, {video.stat().st_size / 2**20:.0f} MiB")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return [line(header), "  ".join("-" * w for w in widths), *map(line, rows)]


def _verdict(value: float, goal: float, at_least: bool) -> str:
    if (value >= goal) if at_least else (value <= goal):
        return "met"
    return f"short of {goal:g}x by {goal - value:.2f}x" if at_least else f"over {goal:g}x by {value - goal:.2f}x"


def run(setup: Setup, out=print) -> dict[int, dict]:
    """Run the benchmark, printing with ``out``. Returns, per cap, ours with a warm index against the fastest
    peer (``peer``, ``speedup``) and against the decode-work bound (``bound_ratio``)."""
    import shutil

    from tqdm import tqdm

    from medhorizon_tasks.core.video.decode import index_video
    from medhorizon_tasks.core.video.frame_cache import FrameCache

    readers = [r for r in READERS if r in setup.readers]
    missing = {r: why for r in readers if (why := missing_reader(r)) is not None}
    peers = [r for r in PEERS if r in readers and r not in missing]
    if not {"ours", "bound"} <= set(readers) or setup.headline_cap not in setup.caps or not peers:
        raise SystemExit("the benchmark needs our reader, the bound, the headline cap and a peer; "
                         + "; ".join(missing.values()))
    for why in dict.fromkeys(missing.values()):
        out(f"NOTE: {why}: left out")

    video = bench_video(setup.seconds, fps=setup.fps, width=setup.width, height=setup.height, gop=setup.gop,
                        bframes=setup.bframes, directory=setup.directory)
    index = index_video(video)
    out(f"video {_describe(video, index)}")
    plans = {cap: plan_indices(index, cap) for cap in setup.caps}

    # Warm: the index store and identity database a run's pre-flight leaves behind, and a filled frame cache.
    warm = setup.directory / "warm-stores"
    shutil.rmtree(warm, ignore_errors=True)
    cache = FrameCache(setup.directory / "frame-cache")
    cache.clear()
    measure_in_subprocess("ours", video, plans[setup.caps[0]], stores=warm)  # untimed: fills the stores
    if "cache" in readers:
        for indices in plans.values():  # untimed: a miss decodes and stores the plan
            measure_in_subprocess("cache", video, indices, cache.root, stores=warm)

    results: dict[tuple[str, int], list[dict]] = {}
    with tqdm(total=setup.runs * len(setup.caps) * len(readers), desc="timed reads", unit="read") as bar:
        for _ in range(setup.runs):
            for cap in setup.caps:
                for reader in readers:
                    bar.set_postfix_str(f"{reader}, cap {cap}")
                    results.setdefault((reader, cap), []).append(measure_in_subprocess(
                        reader, video, plans[cap], cache.root if reader == "cache" else None,
                        stores=None if reader == "ours_cold" else warm))
                    bar.update(1)
    cache.clear()
    shutil.rmtree(warm, ignore_errors=True)
    reference = sequential_digests(video, {i for indices in plans.values() for i in indices})

    def median(reader: str, cap: int, field: str) -> float:
        return statistics.median(r[field] for r in results[(reader, cap)])

    def best(reader: str, cap: int, field: str = "seconds") -> float:
        """``field`` of the reader's fastest run: other work on the machine only ever slows a read down."""
        return min(results[(reader, cap)], key=lambda r: r["seconds"])[field]

    def fastest_peer(cap: int) -> tuple[float, str]:
        return min((best(r, cap), r) for r in peers)

    out("")
    out(f"seconds, fastest of {setup.runs} run(s), each in a fresh process; "
        "[median peak RSS MB / growth during the read MB]")
    rows = []
    for reader in readers:
        if reader in missing:
            rows.append([LABELS[reader]] + ["missing"] * len(setup.caps))
            continue
        rows.append([LABELS[reader]] + [f"{best(reader, c):.2f} [{median(reader, c, 'peak_mb'):.0f} / "
                                        f"{median(reader, c, 'peak_mb') - median(reader, c, 'base_mb'):.0f}]"
                                        for c in setup.caps])
        if reader in ("ours", "ours_cold"):
            rows.append(["  of which the index"] + [f"{best(reader, c, 'index_seconds'):.2f}"
                                                    for c in setup.caps])
    rows.append(["fastest peer"] + [fastest_peer(c)[1] for c in setup.caps])
    rows.append(["speed-up vs fastest peer, warm index"] +
                [f"{fastest_peer(c)[0] / best('ours', c):.1f}x" for c in setup.caps])
    if "ours_cold" in readers:
        rows.append(["speed-up vs fastest peer, cold"] +
                    [f"{fastest_peer(c)[0] / best('ours_cold', c):.1f}x" for c in setup.caps])
    rows.append(["ours (warm) / decode-work bound"] + [f"{best('ours', c) / best('bound', c):.2f}x"
                                                       for c in setup.caps])
    if "cache" in readers:
        rows.append(["cache hit vs ours (warm)"] + [f"{best('ours', c) / best('cache', c):.0f}x faster"
                                                    for c in setup.caps])
    for line in _table(["reader"] + [f"cap {c} ({len(plans[c])} frames)" for c in setup.caps], rows):
        out(line)

    out("")
    out("frame agreement with a full sequential PyAV decode (all targets, every run):")
    for reader in readers:
        if reader in missing:
            continue
        verdicts = []
        for cap in setup.caps:
            expected = [reference[i] for i in plans[cap]]
            bad = sum(sum(a != b for a, b in zip(r["digests"], expected)) + abs(len(r["digests"]) - len(expected))
                      for r in results[(reader, cap)])
            verdicts.append(f"cap {cap}: " + ("identical" if bad == 0 else f"{bad} frames DIFFER"))
        out(f"  {LABELS[reader]:45s} " + ", ".join(verdicts))

    cap = setup.headline_cap
    out("")
    out(f"memory against video length: ours at cap {cap} (cold: the packet pass included), and av.open alone, "
        "each in a fresh process")
    cold = measure_in_subprocess("ours_cold", video, plans[cap])
    rows = [[video.name, f"{index.num_frames:,}", f"{cold['seconds']:.1f}",
             f"{cold['peak_mb']:.0f} [{cold['peak_mb'] - cold['base_mb']:.0f}]",
             f"{measure_in_subprocess('open', video)['peak_mb']:.0f}", "1.00"]]
    for bframes in setup.long_bframes:
        long = long_video(setup.long_segment_s, setup.long_copies, fps=setup.fps, width=setup.long_size[0],
                          height=setup.long_size[1], gop=setup.gop, bframes=bframes, directory=setup.directory)
        long_index = index_video(long)
        out(f"  {_describe(long, long_index)}")
        got = measure_in_subprocess("ours_cold", long, plan_indices(long_index, cap))
        rows.append([long.name, f"{long_index.num_frames:,}", f"{got['seconds']:.1f}",
                     f"{got['peak_mb']:.0f} [{got['peak_mb'] - got['base_mb']:.0f}]",
                     f"{measure_in_subprocess('open', long)['peak_mb']:.0f}", f"{got['peak_mb'] / cold['peak_mb']:.2f}"])
    for line in _table(["video", "frames", "ours s", "ours peak MB [growth]", "av.open peak MB",
                        "ours peak / main video's"], rows):
        out("  " + line)

    summary = {}
    out("")
    out(f"goals (issue 22), ours with a warm index: at least {GOAL_SPEEDUP:g}x the fastest peer, at most "
        f"{GOAL_BOUND:g}x the decode-work bound")
    for c in setup.caps:
        peer_s, peer = fastest_peer(c)
        ours_s, bound_s = best("ours", c), best("bound", c)
        summary[c] = {"peer": peer, "speedup": peer_s / ours_s, "bound_ratio": ours_s / bound_s,
                      "ceiling": peer_s / bound_s}
        out(f"  cap {c}: {peer_s / ours_s:.2f}x the fastest peer ({peer} {peer_s:.2f} s / ours {ours_s:.2f} s): "
            f"{_verdict(peer_s / ours_s, GOAL_SPEEDUP, True)}; {ours_s / bound_s:.2f}x the bound ({bound_s:.2f} s): "
            f"{_verdict(ours_s / bound_s, GOAL_BOUND, False)}; an exact reader at the bound would be "
            f"{peer_s / bound_s:.2f}x the fastest peer")
    out("admission speed-up vs the fastest peer, warm index: "
        + ", ".join(f"cap {c} {summary[c]['speedup']:.2f}x ({summary[c]['peer']})" for c in setup.caps))
    out("ours / decode-work bound, warm index: "
        + ", ".join(f"cap {c} {summary[c]['bound_ratio']:.2f}x" for c in setup.caps))
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10-minute video, one run (smoke test)")
    parser.add_argument("--runs", type=int, help="runs per reader and cap (default: 3; --quick: 1)")
    parser.add_argument("--measure", nargs="+", metavar="ARG", help=argparse.SUPPRESS)  # internal: one timed read
    args = parser.parse_args(argv)
    if args.measure:
        reader, video, indices_file, *cache_root = args.measure
        indices = json.loads(Path(indices_file).read_text())
        print(json.dumps(measure(reader, Path(video), indices, Path(cache_root[0]) if cache_root else None)))
        return
    setup = QUICK if args.quick else FULL
    if args.runs:
        setup = dataclasses.replace(setup, runs=args.runs)
    run(setup)


if __name__ == "__main__":
    main()
