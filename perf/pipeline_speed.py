"""A run's pipeline: decoding ahead of a model that takes a fixed time per request, on HD synthetic videos.

Usage::

    python perf/pipeline_speed.py --quick     # 3 HD videos (720p, GOP 10 s, B-frames), 4 questions each
    python perf/pipeline_speed.py             # 10 longer HD videos, 10 questions each: 100 requests

The model is a probe that sleeps ``--delay`` seconds per request (standing in for a GPU: it uses no CPU).
Every video has several questions and they share its plan (MedHorizon's 1 FPS plan capped to ``--cap``), as
in the release; requests come interleaved across videos (lmms-eval orders requests by prompt length, not by
video) and are answered as the bridges answer them: the requests of a video together
(``core.video.ahead.by_video``), results put back in request order. Each request's frames come through the
package's own frame path: the run's store of decoded plans
(``core.video.ahead.decoded_once``, via ``core.video.prepared.decode_prepared``) and the look-ahead
(``core.video.ahead.ahead``) that the bridges, hooks, VLMEvalKit datasets and ``surghi zeroshot`` use.

Printed, for one process and for two (the requests split by video, as two ranks would take them):

* ``wall / max(model, decode)``: the run's wall time over the larger of the total model time and the total
  decode time (each distinct plan decoded once, serially, measured first): 1.00x is perfect overlap
  (goal, issue 28: at most 1.1x); ``wall / serial sum`` beside it (1.00x: no overlap at all);
* ``wall / (first decode + max(model, decode))``: the same with the first plan's decode added, which every
  order must wait for before the model has anything to answer; what is left above 1.00x is overlap lost
  (goal, issue 41: at most 1.05x);
* ``decodes per distinct plan`` (goal: exactly 1.00);
* for the two-process run, the machine's load (1-minute load average, ``os.getloadavg``) at its start and end:
  two processes on a loaded machine share its cores with others, and the figure says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared pieces beside this script

from bench_videos import BENCH_DIR, VideoSpec, spec_video  # noqa: E402

GOAL_OVERLAP = 1.1  # issue 28: the pipeline's wall time at most 1.1x max(model, decode)
GOAL_FIRST = 1.05  # issue 41: at most 1.05x (first decode + max(model, decode))


def _videos(args) -> list[Path]:
    width, height = (int(x) for x in args.size.split("x"))
    spec = VideoSpec(width, height, 25, 250, 3)
    # distinct lengths: distinct files (and plans)
    return [spec_video(spec, args.seconds + 10 * k, Path(args.directory)) for k in range(args.videos)]


def _requests(videos: list[Path], questions: int) -> list[tuple[int, Path]]:
    """(question, video), interleaved across videos."""
    return [(q, v) for q in range(questions) for v in videos]


def _prepare(video: Path, cap: int):
    from medhorizon_tasks.core.sampling import FpsCap, plan_frames
    from medhorizon_tasks.core.video.prepared import PreparedVideo, video_index

    index = video_index(video)
    return PreparedVideo(video, index, plan_frames(index.meta(), FpsCap(1.0, cap)), index.meta().duration_s)


def one_process(videos: list[Path], questions: int, cap: int, delay: float) -> dict:
    """The run in this process: decode time (each distinct plan once, serially), then the pipelined run."""
    from medhorizon_tasks.core.video.ahead import ahead, by_video, run_plans
    from medhorizon_tasks.core.video.prepared import decode_prepared
    from medhorizon_tasks.core.video.size import PixelBudget

    rule = PixelBudget()
    prepared = {v: _prepare(v, cap) for v in videos}  # the pre-flight's work (indexes), not timed
    requests = _requests(videos, questions)
    requests = [requests[i] for i in by_video(video for _, video in requests)]  # as visuals_ahead answers them
    alone = {}
    for path, video in prepared.items():
        t0 = time.perf_counter()
        _decode_alone(video, rule)
        alone[path] = time.perf_counter() - t0
    decode_s = sum(alone.values())

    store = run_plans()
    store.clear()
    before = store.decodes
    t0 = time.perf_counter()
    for done in ahead(requests, lambda r: decode_prepared(prepared[r[1]], rule)):
        if done.error is not None:
            raise done.error
        time.sleep(delay)  # the model answers request i; the next requests' frames decode meanwhile
    wall = time.perf_counter() - t0
    return {"wall": wall, "model": delay * len(requests), "decode": decode_s, "first": alone[requests[0][1]],
            "decodes": store.decodes - before, "plans": len(prepared), "requests": len(requests)}


def _decode_alone(video, rule) -> None:
    from medhorizon_tasks.core.video.decode import decode_plan
    from medhorizon_tasks.core.video.prepared import frame_size

    decode_plan(video.path, video.plan, size=frame_size(video, rule), index=video.index)


def two_processes(videos: list[Path], args) -> list[dict]:
    """Two processes at once, the videos split between them (as two ranks); each reports its own run."""
    halves = [videos[0::2], videos[1::2]]
    load_start = _load()
    procs = [subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(
        {"videos": [str(v) for v in half], "questions": args.questions, "cap": args.cap, "delay": args.delay})],
        stdout=subprocess.PIPE, text=True, env={**os.environ}) for half in halves if half]
    out = []
    for p in procs:
        stdout, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"a worker process failed (exit {p.returncode})")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    for run in out:
        run["load"] = (load_start, _load())
    return out


def _load() -> float | None:
    """The machine's 1-minute load average now (None where the system does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def report(name: str, runs: list[dict]) -> None:
    wall = max(r["wall"] for r in runs)
    ideal = max(max(r["model"], r["decode"]) for r in runs)
    serial = max(r["model"] + r["decode"] for r in runs)
    decodes, plans = sum(r["decodes"] for r in runs), sum(r["plans"] for r in runs)
    print(f"{name}: {sum(r['requests'] for r in runs)} requests over {plans} plans; model "
          f"{max(r['model'] for r in runs):.2f} s, decode {max(r['decode'] for r in runs):.2f} s, wall {wall:.2f} s")
    verdict = "met" if wall / ideal <= GOAL_OVERLAP else f"over {GOAL_OVERLAP:g}x by {wall / ideal - GOAL_OVERLAP:.2f}x"
    print(f"  wall / max(model, decode): {wall / ideal:.2f}x ({verdict}); wall / serial sum: {wall / serial:.2f}x")
    first = max(r["first"] + max(r["model"], r["decode"]) for r in runs)
    verdict = "met" if wall / first <= GOAL_FIRST else f"over {GOAL_FIRST:g}x by {wall / first - GOAL_FIRST:.2f}x"
    print(f"  wall / (first decode + max(model, decode)): {wall / first:.2f}x ({verdict}); first decode "
          f"{max(r['first'] for r in runs):.2f} s")
    print(f"  decodes per distinct plan: {decodes / plans:.2f}")
    if "load" in runs[0]:
        start, end = runs[0]["load"]
        shown = lambda x: "unknown" if x is None else f"{x:.2f}"  # noqa: E731
        print(f"  machine load (1-minute average) at the start {shown(start)}, at the end {shown(end)}, on "
              f"{os.cpu_count()} cores")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 videos of 2 minutes, 4 questions each")
    parser.add_argument("--videos", type=int, help="videos (default 10; --quick 3)")
    parser.add_argument("--seconds", type=int, help="the first video's length (default 600; --quick 120)")
    parser.add_argument("--questions", type=int, help="questions per video (default 10: 100 requests; --quick 4)")
    parser.add_argument("--cap", type=int, default=64, help="frames per plan: 1 FPS capped to this (default 64)")
    parser.add_argument("--delay", type=float, default=1.0, help="the model's seconds per request (default 1)")
    parser.add_argument("--size", default="1280x720", help="video size (default 1280x720)")
    parser.add_argument("--directory", default=str(BENCH_DIR), help="where the test videos are kept")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # internal: one process of the two-process run
    args = parser.parse_args(argv)
    if args.worker:
        job = json.loads(args.worker)
        print(json.dumps(one_process([Path(v) for v in job["videos"]], job["questions"], job["cap"], job["delay"])))
        return
    args.videos = args.videos or (3 if args.quick else 10)
    args.questions = args.questions or (4 if args.quick else 10)
    args.seconds = args.seconds or (120 if args.quick else 600)
    videos = _videos(args)
    print(f"{len(videos)} videos {args.size}, GOP 10 s, 3 B-frames, {args.seconds}+ s; {args.questions} questions "
          f"each sharing the video's plan (1 FPS, cap {args.cap}); model: a {args.delay:g} s sleep per request; "
          f"goals: wall at most {GOAL_OVERLAP:g}x max(model, decode) (issue 28) and {GOAL_FIRST:g}x (first decode + "
          f"max(model, decode)) (issue 41), 1.00 decode per distinct plan")
    report("one process", [one_process(videos, args.questions, args.cap, args.delay)])
    report("two processes", two_processes(videos, args))


if __name__ == "__main__":
    main()
