"""The readers the speed scripts in ``perf/`` compare, each timed in a fresh process, and the decode-work limit.

Each reader returns the frames as ``(N, H, W, 3)`` uint8 RGB. ``python perf/bench_readers.py --measure
READER VIDEO INDICES_JSON [CACHE]`` is one timed read (what :func:`measure_in_subprocess` runs). A peer that
is not installed, or cannot load or read here (torchcodec without FFmpeg's shared libraries), is reported
unavailable with its reason (:func:`missing_reader`, :class:`Unavailable`) and the benchmark goes on.

The decode-work limit (``bound``): the minimal work of an exact reader, counted from the stream's own
reference structure. Before the clock starts, the packets each group of targets needs (from the keyframe
opening the targets' GOP up to the last target's packet, in decode order) are read into memory; timed:
decoding them on ONE core with the stream's own decoder, skipping the pictures nothing refers to unless they
are targets (H.264 ``skip_frame=NONREF``: the decoder drops exactly the pictures with ``nal_ref_idc == 0``),
converting only the targets to RGB. ``decoded_frames`` counts the pictures it decoded (references the
targets depend on, and the targets): the minimal count. Divided by the cores used, its time is the
perfect-parallel limit no exact reader on that many cores can beat.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

READERS = ("ours", "ours_cold", "lmms", "decord", "torchcodec", "torchcodec_approx", "bound", "cache")
PEERS = ("lmms", "decord", "torchcodec", "torchcodec_approx")
LABELS = {"ours": "ours, warm index: stored_index + decode_plan",
          "ours_cold": "ours, cold: hash + index + store + decode",
          "lmms": "lmms-eval read_video path (PyAV)", "decord": "decord get_batch (VLMEvalKit)",
          "torchcodec": "torchcodec exact, threads auto", "torchcodec_approx": "torchcodec approximate, threads auto",
          "bound": "decode-work limit (one core / cores)", "cache": "ours: cache hit (cached_decode)",
          "open": "av.open alone"}


class Unavailable(RuntimeError):
    """A peer that could not read here (it is reported, with this reason, and the benchmark goes on)."""


def cores() -> int:
    """The cores this process may use (what ours decodes on)."""
    from medhorizon_tasks.core.video.decode import available_cores

    return available_cores()

def read_ours(video: Path, indices: list[int], parts: dict) -> np.ndarray:
    """Our admission: the index from the store (built and stored first when the store is empty), then the
    decode. ``parts["index_seconds"]``: the time to the index."""
    from medhorizon_tasks.core.sampling import FramePlan
    from medhorizon_tasks.core.video.decode import decode_plan
    from medhorizon_tasks.core.video.index_store import stored_index

    t0 = time.perf_counter()
    index = stored_index(video)
    parts["index_seconds"] = time.perf_counter() - t0
    stats: dict = {}
    frames = decode_plan(video, FramePlan(tuple(indices), (), "bench"), index=index, stats=stats)
    parts["decoded_frames"] = stats["decoded_frames"]
    return frames


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
    containers = [av.open(str(video))]  # one core: the perfect-parallel limit is this time / the cores
    return groups, rows, (index.height, index.width), containers


def read_bound(work: tuple, parts: dict | None = None) -> np.ndarray:
    """The timed part of the limit: decode each group's packets from memory on one thread with the stream's
    own single-threaded decoder; ``parts["decoded_frames"]``: the pictures decoded."""
    from concurrent.futures import ThreadPoolExecutor

    groups, rows, (height, width), containers = work
    out = np.empty((sum(len(r) for r in rows.values()), height, width, 3), dtype=np.uint8)
    pending, lock = iter(groups), threading.Lock()

    def next_group():
        with lock:
            return next(pending, None)

    decoded = [0]

    def keep(frames) -> None:
        for frame in frames:
            decoded[0] += 1
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
    if parts is not None:
        parts["decoded_frames"] = decoded[0]
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
            "bound": lambda: read_bound(work, parts),
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
        cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", reader, str(video), str(indices_file)]
        if cache_root is not None:
            cmd.append(str(cache_root))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        if reader in PEERS:  # a peer that fails here (a library it loads at read time) is reported, not fatal
            last = [x for x in done.stderr.strip().splitlines() if x.strip()][-1:] or ["no message"]
            raise Unavailable(f"{reader} failed on {video.name} (exit {done.returncode}: {last[0][:200]})")
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



def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="one timed read (internal: run by measure_in_subprocess)")
    parser.add_argument("--measure", nargs="+", metavar="ARG", required=True)
    args = parser.parse_args(argv)
    reader, video, indices_file, *cache_root = args.measure
    indices = json.loads(Path(indices_file).read_text())
    print(json.dumps(measure(reader, Path(video), indices, Path(cache_root[0]) if cache_root else None)))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
