"""Per-frame cost of Sureon's blurring pass on CPU, against decoding the same frames and RapidOCR's default.

Usage::

    python perf/blur_speed.py              # 48 frames, 3 runs (~1-2 min on 2 cores)
    python perf/blur_speed.py --quick      # 16 frames, 1 run

The pass (:class:`medhorizon_tasks.core.video.redact.Redaction`) runs once per
sampled frame, at most 8 per Sureon item. Frames are 448x252 (16:9 at the
protocol's ``max_side``): a tissue-like background (the synthetic samples'
generator) with two rendered captions each, a face photograph
(scikit-image's astronaut, shipped with it) pasted into every fourth.

Measured, each as the median over runs of milliseconds per frame:

* ``text``: the OCR text-detection stage alone, as the pass runs it (the
  frame at its own size);
* ``faces``: the face-detection stage alone;
* ``pass``: :meth:`Redaction.apply` (both detectors, then the blurring);
* ``rapidocr_default``: RapidOCR's text detection with its own defaults,
  which enlarge the shorter side to 736 px (the reference this package departs from);
* ``decode``: :func:`~medhorizon_tasks.core.video.decode.decode_plan` of Sureon clip plans
  (8 frames each) from a 448x252 H.264 video of the same frames, per frame.

Ratios are within the same run (``pass / decode``, ``rapidocr_default / text``),
so load from other work on the machine affects both sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

H, W = 252, 448


def make_frames(n: int) -> np.ndarray:
    import skimage.data
    from PIL import Image, ImageDraw, ImageFont

    from medhorizon_tasks.data.synthetic.visual_code import BackgroundGenerator

    bg = BackgroundGenerator(H, W, seed=7)
    face = Image.fromarray(skimage.data.astronaut()).resize((160, 160))
    out = []
    for k in range(n):
        img = Image.fromarray(bg(k * 2.5))
        if k % 4 == 0:
            img.paste(face, (270, 40))
        draw = ImageDraw.Draw(img)
        draw.text((10, 220), f"Step {k}: dissection of Calot's triangle", fill=(255, 255, 255),
                  font=ImageFont.load_default(size=18))
        draw.text((10, 8), "Harmonic ACE+ 36 cm", fill=(255, 230, 0), font=ImageFont.load_default(size=14))
        out.append(np.asarray(img))
    return np.stack(out)


def per_frame_ms(fn, items, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        times.append((time.perf_counter() - t0) / len(items) * 1000)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.frames, args.runs = 16, 1

    from rapidocr import RapidOCR

    from medhorizon_tasks.core.sampling import Clip, plan_frames
    from medhorizon_tasks.core.video.decode import decode_plan, index_video
    from medhorizon_tasks.core.video.redact import Redaction
    from medhorizon_tasks.data.synthetic.video_writer import write_video

    frames = make_frames(args.frames)
    text_only, faces_only, full = Redaction(faces=False), Redaction(text=False), Redaction()
    default_ocr = RapidOCR(params={"Global.use_cls": False, "Global.use_rec": False, "Global.log_level": "error"})
    for f in frames[:2]:  # load the models before timing
        full.apply(f[None])
        default_ocr(np.ascontiguousarray(f[..., ::-1]), use_det=True, use_cls=False, use_rec=False)

    found = sum(len(full.regions(f)) for f in frames)
    results = {
        "text": per_frame_ms(text_only.regions, frames, args.runs),
        "faces": per_frame_ms(faces_only.regions, frames, args.runs),
        "pass": per_frame_ms(lambda f: full.apply(f[None]), frames, args.runs),
        "rapidocr_default": per_frame_ms(
            lambda f: default_ocr(np.ascontiguousarray(f[..., ::-1]), use_det=True, use_cls=False, use_rec=False),
            frames, args.runs),
    }
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "clip.mp4"
        fps = 25.0
        write_video(video, (frames[k // 25 % len(frames)] for k in range(int(fps * 60))), fps, W, H)  # 60 s
        index = index_video(video)
        meta = index.meta()
        seconds = meta.duration_s
        plans = [plan_frames(meta, Clip(s, min(s + 8.0, seconds - 0.1))) for s in np.arange(0, seconds - 9, 8.0)]
        n_frames = sum(len(p) for p in plans)
        results["decode"] = per_frame_ms(lambda p: decode_plan(video, p, max_side=448, index=index),
                                         plans, args.runs) * len(plans) / n_frames
    results["pass_over_decode"] = results["pass"] / results["decode"]
    results["rapidocr_default_over_text"] = results["rapidocr_default"] / results["text"]
    results.update(frames=len(frames), runs=args.runs, regions_found=found, size=f"{W}x{H}")
    for key in ("text", "faces", "pass", "rapidocr_default", "decode"):
        print(f"{key:>18}: {results[key]:8.1f} ms/frame")
    print(f"{'pass / decode':>18}: {results['pass_over_decode']:8.1f}x")
    print(f"{'default / ours':>18}: {results['rapidocr_default_over_text']:8.1f}x  (RapidOCR's default text detection)")
    print(f"{'regions blurred':>18}: {found} in {len(frames)} frames")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
