"""Frame admission speed and memory: our exact decoder against the readers other harnesses use, and
against the decode work no exact reader can avoid.

Usage::

    python perf/decode_speed.py            # 2-hour 320x240 video, caps 64/512/1248, 3 runs (~12 min here)
    python perf/decode_speed.py --runs 5   # what the README's table reports (~17 min here)
    python perf/decode_speed.py --quick    # 10-minute video, 1 run (smoke use, a few minutes)
    python perf/decode_speed.py --hd --quick  # HD videos like the sources (1080p GOP 10 s, 720p GOP 1 s), 1 run,
                                              # then the release projection (issue 28's check)

(This is the script issue 22 calls ``benchmarks/decode.py``: the top-level ``benchmarks/`` folder became
``perf/``.) Linux only (peak memory is read from /proc). Pieces shared by every speed script: the test
videos (``bench_videos.py``: generated once, kept in ``~/.cache/medhorizon_tasks/bench/``), the readers and
the decode-work limit (``bench_readers.py``) and the report's tables (``bench_report.py``).

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
* decode-work limit: the minimal work of an exact reader (the pictures the
  targets depend on, counted from the stream's own reference structure, and the
  targets), decoded from memory on ONE core, then divided by the cores ours
  uses: the perfect-parallel time (``bench_readers.py`` says how). Printed beside
  it: ours' count of decoded pictures against that minimal count. No demuxing,
  seeking, indexing or file identity: what ours adds to it is overhead.
* cache hit: ``cached_decode`` on a warm :class:`FrameCache`.

Agreement: every target frame of every reader (the bound included) is compared
(sha1) with a plain full sequential PyAV decode (frame i = the i-th frame it
outputs).

The last lines print our speed-up against the FASTEST peer (lmms-eval, decord,
torchcodec exact or approximate) at every cap, with a warm index (goal, issue 28:
at least 3x), and our time over the perfect-parallel limit (goal: at most 1.2x).
A peer that is missing, or cannot load or read here, is named with its reason.

``--hd``: the same on each video of ``bench_videos.HD_VIDEOS``, then the release
projection: the decode time of the whole release (Table 4's sources, their
hours and videos; resolution and rate from the dataset card where it gives them,
else 1080p 25 fps; GOP 10 s and 3 B-frames assumed, as no card gives them) at
each cap, one decode per video and plan, at the limit's single-core rate
measured on the HD video of the nearest size, divided by 1, 2, 16 and 64 cores.

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
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared pieces beside this script

from bench_readers import (  # noqa: E402
    LABELS,
    PEERS,
    READERS,
    Unavailable,
    cores,
    measure_in_subprocess,
    missing_reader,
    plan_indices,
    sequential_digests,
)
from bench_report import describe, table, verdict  # noqa: E402
from bench_videos import (  # noqa: E402
    BENCH_DIR,
    HD_VIDEOS,
    REAL_BITRATE_MBPS,
    VideoSpec,
    bench_video,
    bitrate_mbps,
    long_video,
)

__all__ = ["Setup", "run", "projection", "LABELS", "PEERS", "READERS", "missing_reader"]

GOAL_SPEEDUP, GOAL_BOUND = 3.0, 1.2  # issue 28: >= 3x the fastest peer, <= 1.2x the perfect-parallel limit


@dataclasses.dataclass(frozen=True)
class Setup:
    seconds: int = 7200
    width: int = 320
    height: int = 240
    fps: int = 25
    gop: int = 250
    bframes: int = 3
    content: str = "pan"
    caps: tuple[int, ...] = (64, 512, 1248)
    headline_cap: int = 512
    runs: int = 3
    readers: tuple[str, ...] = READERS
    # Long, tiny videos for the memory check: `long_copies` copies of a `long_segment_s` segment,
    # one video per B-frame setting in `long_bframes` (none: no memory check).
    long_size: tuple[int, int] = (64, 48)
    long_segment_s: int = 600
    long_copies: int = 120
    long_bframes: tuple[int, ...] = (0, 3)
    directory: Path = BENCH_DIR


FULL = Setup()
QUICK = dataclasses.replace(FULL, seconds=600, runs=1, long_copies=12)


def hd_setups(quick: bool, runs: int | None = None) -> list[Setup]:
    """One setup per HD video (no memory check: the 320x240 run has it). Quick: 5-minute videos, one run."""
    seconds, n = (300, 1) if quick else (1800, 3)
    return [Setup(seconds=seconds, width=s.width, height=s.height, fps=s.fps, gop=s.gop, bframes=s.bframes,
                  content=s.content, runs=runs or n, long_bframes=()) for s in HD_VIDEOS]


def run(setup: Setup, out=print) -> dict[int, dict]:
    """Run the benchmark, printing with ``out``. Returns, per cap, ours with a warm index against the fastest
    peer (``peer``, ``speedup``), against the perfect-parallel limit (``bound_ratio``), the limit's single-core
    rate (``rate_fps``: minimal pictures per second) and the decoded counts (``ours_decoded``, ``minimal``)."""
    from tqdm import tqdm

    from medhorizon_tasks.core.video.decode import index_video
    from medhorizon_tasks.core.video.frame_cache import FrameCache

    readers = [r for r in READERS if r in setup.readers]
    missing = {r: why for r in readers if (why := missing_reader(r)) is not None}
    if not {"ours", "bound"} <= set(readers) or setup.headline_cap not in setup.caps:
        raise SystemExit("the benchmark needs our reader, the limit and the headline cap")
    for why in dict.fromkeys(missing.values()):
        out(f"NOTE: {why}: left out")

    video = bench_video(setup.seconds, fps=setup.fps, width=setup.width, height=setup.height, gop=setup.gop,
                        bframes=setup.bframes, directory=setup.directory, content=setup.content)
    index = index_video(video)
    out(f"video {describe(video, index)}")
    scale = setup.width * setup.height / (1920 * 1080)  # the 1080p range at the same bits per pixel
    low, high = (x * scale for x in REAL_BITRATE_MBPS)
    rate = bitrate_mbps(video)
    within = "in" if low <= rate <= high else "OUTSIDE"
    out(f"bitrate {rate:.1f} Mbit/s ({setup.content} content; {within} the {low:.1f}-{high:.1f} Mbit/s of real "
        f"surgical recordings at this size: bench_videos.REAL_BITRATE_MBPS at 1080p, scaled by pixels)")
    plans = {cap: plan_indices(index, cap) for cap in setup.caps}
    n_cores = cores()

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
                    bar.update(1)
                    if reader in missing:
                        continue
                    bar.set_postfix_str(f"{reader}, cap {cap}")
                    try:
                        results.setdefault((reader, cap), []).append(measure_in_subprocess(
                            reader, video, plans[cap], cache.root if reader == "cache" else None,
                            stores=None if reader == "ours_cold" else warm))
                    except Unavailable as exc:
                        missing[reader] = str(exc)
                        out(f"NOTE: {exc}: reported unavailable, the benchmark goes on")
    cache.clear()
    shutil.rmtree(warm, ignore_errors=True)
    peers = [r for r in PEERS if r in readers and r not in missing]
    reference = sequential_digests(video, {i for indices in plans.values() for i in indices})

    def median(reader: str, cap: int, field: str) -> float:
        return statistics.median(r[field] for r in results[(reader, cap)])

    def best(reader: str, cap: int, field: str = "seconds") -> float:
        """``field`` of the reader's fastest run: other work on the machine only ever slows a read down."""
        return min(results[(reader, cap)], key=lambda r: r["seconds"])[field]

    def limit(cap: int) -> float:
        return best("bound", cap) / n_cores

    def fastest_peer(cap: int) -> tuple[float, str]:
        return min(((best(r, cap), r) for r in peers), default=(float("nan"), "none"))

    out("")
    out(f"seconds, fastest of {setup.runs} run(s), each in a fresh process; "
        "[median peak RSS MB / growth during the read MB]")
    rows = []
    for reader in readers:
        if reader in missing:
            rows.append([LABELS[reader]] + ["unavailable"] * len(setup.caps))
            continue
        if reader == "bound":
            rows.append([LABELS[reader]] + [f"{best(reader, c):.2f} / {n_cores} = {limit(c):.2f}" for c in setup.caps])
            continue
        rows.append([LABELS[reader]] + [f"{best(reader, c):.2f} [{median(reader, c, 'peak_mb'):.0f} / "
                                        f"{median(reader, c, 'peak_mb') - median(reader, c, 'base_mb'):.0f}]"
                                        for c in setup.caps])
        if reader in ("ours", "ours_cold"):
            rows.append(["  of which the index"] + [f"{best(reader, c, 'index_seconds'):.2f}"
                                                    for c in setup.caps])
    rows.append(["decoded pictures: ours / minimal"] + [f"{best('ours', c, 'decoded_frames'):,} / "
                                                        f"{best('bound', c, 'decoded_frames'):,}" for c in setup.caps])
    rows.append(["fastest peer"] + [fastest_peer(c)[1] for c in setup.caps])
    rows.append(["speed-up vs fastest peer, warm index"] +
                [f"{fastest_peer(c)[0] / best('ours', c):.1f}x" for c in setup.caps])
    if "ours_cold" in readers and "ours_cold" not in missing:
        rows.append(["speed-up vs fastest peer, cold"] +
                    [f"{fastest_peer(c)[0] / best('ours_cold', c):.1f}x" for c in setup.caps])
    rows.append(["ours (warm) / perfect-parallel limit"] + [f"{best('ours', c) / limit(c):.2f}x" for c in setup.caps])
    if "cache" in readers and "cache" not in missing:
        rows.append(["cache hit vs ours (warm)"] + [f"{best('ours', c) / best('cache', c):.0f}x faster"
                                                    for c in setup.caps])
    for line in table(["reader"] + [f"cap {c} ({len(plans[c])} frames)" for c in setup.caps], rows):
        out(line)

    out("")
    out("frame agreement with a full sequential PyAV decode (all targets, every run):")
    for reader in readers:
        if reader in missing:
            out(f"  {LABELS[reader]:45s} unavailable: {missing[reader]}")
            continue
        verdicts = []
        for cap in setup.caps:
            expected = [reference[i] for i in plans[cap]]
            bad = sum(sum(a != b for a, b in zip(r["digests"], expected)) + abs(len(r["digests"]) - len(expected))
                      for r in results[(reader, cap)])
            verdicts.append(f"cap {cap}: " + ("identical" if bad == 0 else f"{bad} frames DIFFER"))
        out(f"  {LABELS[reader]:45s} " + ", ".join(verdicts))

    if setup.long_bframes:
        _memory(setup, video, index, plans, out)

    summary = {}
    out("")
    out(f"goals (issue 28), ours with a warm index: at least {GOAL_SPEEDUP:g}x the fastest peer, at most "
        f"{GOAL_BOUND:g}x the perfect-parallel limit ({n_cores} cores)")
    for c in setup.caps:
        peer_s, peer = fastest_peer(c)
        ours_s, bound_s = best("ours", c), limit(c)
        summary[c] = {"peer": peer, "speedup": peer_s / ours_s, "bound_ratio": ours_s / bound_s,
                      "ceiling": peer_s / bound_s, "ours_decoded": best("ours", c, "decoded_frames"),
                      "minimal": best("bound", c, "decoded_frames"),
                      "rate_fps": best("bound", c, "decoded_frames") / best("bound", c)}
        out(f"  cap {c}: {peer_s / ours_s:.2f}x the fastest peer ({peer} {peer_s:.2f} s / ours {ours_s:.2f} s): "
            f"{verdict(peer_s / ours_s, GOAL_SPEEDUP, True)}; {ours_s / bound_s:.2f}x the limit ({bound_s:.2f} s): "
            f"{verdict(ours_s / bound_s, GOAL_BOUND, False)}; an exact reader at the limit would be "
            f"{peer_s / bound_s:.2f}x the fastest peer")
    out("admission speed-up vs the fastest peer, warm index: "
        + ", ".join(f"cap {c} {summary[c]['speedup']:.2f}x ({summary[c]['peer']})" for c in setup.caps))
    out("ours / decode-work bound, warm index: "
        + ", ".join(f"cap {c} {summary[c]['bound_ratio']:.2f}x" for c in setup.caps))
    return summary


def _memory(setup: Setup, video: Path, index, plans: dict, out) -> None:
    """Memory against video length: ours (cold) on long tiny videos beside the main one, and av.open alone."""
    from medhorizon_tasks.core.video.decode import index_video

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
        out(f"  {describe(long, long_index)}")
        got = measure_in_subprocess("ours_cold", long, plan_indices(long_index, cap))
        rows.append([long.name, f"{long_index.num_frames:,}", f"{got['seconds']:.1f}",
                     f"{got['peak_mb']:.0f} [{got['peak_mb'] - got['base_mb']:.0f}]",
                     f"{measure_in_subprocess('open', long)['peak_mb']:.0f}", f"{got['peak_mb'] / cold['peak_mb']:.2f}"])
    for line in table(["video", "frames", "ours s", "ours peak MB [growth]", "av.open peak MB",
                       "ours peak / main video's"], rows):
        out("  " + line)


# The release's sources (MedHorizon Table 4: videos and hours) and what the dataset card / the upstream
# datasets' pages say of their recordings (reference/upstream_datasets.md); None: not documented, taken as
# 1920x1080 at 25 fps. No source documents its GOP: 10 s (x264's default of 250 frames at 25 fps) and 3 B-frames
# are assumed for all.
SOURCES = {  # name: (videos, hours, (width, height, fps) or None)
    "AutoLaparo": (20, 22.3, (1920, 1080, 25)), "Galar": (44, 351.3, None), "GraSP": (13, 32.4, (1280, 800, 30)),
    "MultiBypass": (125, 193.3, None), "PitVQA": (10, 10.5, None), "REAL-Colon": (39, 17.0, (1240, 1080, 25)),
    "TMVP": (59, 122.7, None), "US-Study": (30, 9.6, None)}
ASSUMED = (1920, 1080, 25)
ASSUMED_GOP_S, ASSUMED_BFRAMES = 10.0, 3


def minimal_pictures(seconds: float, fps: float, cap: int, gop_s: float = ASSUMED_GOP_S,
                     bframes: int = ASSUMED_BFRAMES) -> float:
    """Pictures an exact reader decodes for MedHorizon's plan (1 FPS, capped to ``cap``) of one video: per target,
    the reference pictures from its GOP's keyframe up to it (a 1/(1+bframes) share of the pictures; on average
    half a GOP when targets are a GOP or more apart, else the spacing), and the target."""
    targets = min(cap, int(seconds))
    spacing = seconds / max(targets, 1)
    reach = gop_s / 2 if spacing >= gop_s else spacing
    return targets * (reach * fps / (1 + bframes) + 1)


def projection(rates: dict[tuple[int, int], float], caps=(64, 512, 1248), core_counts=(1, 2, 16, 64)) -> list[str]:
    """Lines of the release projection: the whole release decoded once per video and plan (decode-once: every
    question of a video shares its plan), at the perfect-parallel limit; ``rates``: single-core minimal
    pictures per second measured per (width, height), scaled by pixel count to each source's size."""
    def rate(width: int, height: int) -> float:
        (w, h), r = min(rates.items(), key=lambda kv: abs(kv[0][0] * kv[0][1] - width * height))
        return r * (w * h) / (width * height)

    lines = [f"release projection (decode once per video and plan, at the perfect-parallel limit; GOP "
             f"{ASSUMED_GOP_S:g} s and {ASSUMED_BFRAMES} B-frames assumed, sizes per dataset card else "
             f"{ASSUMED[0]}x{ASSUMED[1]} {ASSUMED[2]} fps; single-core rates measured: "
             + ", ".join(f"{w}x{h} {r:,.0f} pictures/s" for (w, h), r in sorted(rates.items())) + "):"]
    for cap in caps:
        single = 0.0
        for videos, hours, shape in SOURCES.values():
            width, height, fps = shape or ASSUMED
            single += videos * minimal_pictures(hours * 3600 / videos, fps, cap) / rate(width, height)
        lines.append(f"  projection, cap {cap}: " + ", ".join(
            f"{n} core{'s' if n > 1 else ''} {_hours(single / n)}" for n in core_counts))
    return lines


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter videos, one run (smoke test)")
    parser.add_argument("--hd", action="store_true", help="the HD videos (1080p and 720p) and the release projection")
    parser.add_argument("--runs", type=int, help="runs per reader and cap (default: 3; --quick: 1)")
    args = parser.parse_args(argv)
    if args.hd:
        rates = {}
        for setup in hd_setups(args.quick, args.runs):
            spec = VideoSpec(setup.width, setup.height, setup.fps, setup.gop, setup.bframes, setup.content)
            print(f"\nHD video: {spec.describe()}")
            summary = run(setup)
            rates[(setup.width, setup.height)] = max(s["rate_fps"] for s in summary.values())
        print("")
        for line in projection(rates):
            print(line)
        return
    setup = QUICK if args.quick else FULL
    if args.runs:
        setup = dataclasses.replace(setup, runs=args.runs)
    run(setup)


if __name__ == "__main__":
    main()
