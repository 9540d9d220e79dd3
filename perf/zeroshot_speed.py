"""Zero-shot labelling speed: ``surghi zeroshot``'s labeller against the naive per-window loop, in one run.

Usage::

    python perf/zeroshot_speed.py              # 1 FPS annotations on the synthetic sample, median of 3
    python perf/zeroshot_speed.py --repeat 1   # one repetition (a third of the time)
    python perf/zeroshot_speed.py --every 3    # the sample's own items (every third second)

The naive loop takes most of the time: about 5 s a repetition on 2 idle cores, ours 0.15 s (under load
average 10 the same took 6 minutes and 18 s: torch's threads suffer most from sharing the cores).

What is measured, on the synthetic SurgHiBench sample (6 videos of 60 s, 128x96, 4 fps) with items at
every ``--every`` seconds (1: like MultiBypass140's 1 FPS annotations, so each frame lies in 16
clips) and a tiny randomly initialised transformers CLIP (the tests' ``build_hf_clip``) on the CPU,
the paper's protocol (16 frames at 1 FPS centred on each evaluated frame, frames encoded one by one,
cosine similarities averaged over the clip):

* ours: :class:`medhorizon_tasks.runs.zeroshot_video.Labeller`, video by video (each distinct frame
  decoded once and encoded once);
* naive: for every evaluated frame, decode its clip's 16 frames (``decode_plan``) and encode them,
  then the same similarity, mean and argmax.

Both use the same encoder and the same text embeddings (computed once, not timed). Reported: frames
decoded and encoded per distinct frame (goal for ours: 1.0), wall seconds (median of ``--repeat``
runs, the two loops interleaved so that other load on the machine spreads over both), the ratio,
and whether both give the same labels.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' tiny CLIP builder: one definition of the model

from medhorizon_tasks.adapters.encoders.hf import HFEncoder  # noqa: E402
from medhorizon_tasks.benchmarks.surghi.frames import FrameRow, load_hierarchy_file  # noqa: E402
from medhorizon_tasks.benchmarks.surghi.prompts import resolve_prompts  # noqa: E402
from medhorizon_tasks.benchmarks.surghi.zeroshot import (  # noqa: E402
    Setting,
    argmax_label,
    as_embeddings,
    clip_plan,
    similarity,
)
from medhorizon_tasks.core.video.decode import decode_plan  # noqa: E402
from medhorizon_tasks.core.video.prepared import video_index  # noqa: E402
from medhorizon_tasks.data.synthetic.surghi import build_surghi_sample  # noqa: E402
from medhorizon_tasks.runs.zeroshot_video import Labeller, embed_texts  # noqa: E402
from tiny_encoders import build_hf_clip  # noqa: E402


class Counting:
    """The encoder, counting the frames it is given."""

    kind = "image"

    def __init__(self, encoder):
        self.encoder, self.frames = encoder, 0

    def encode_text(self, texts):
        return self.encoder.encode_text(texts)

    def encode_images(self, frames):
        self.frames += len(frames)
        return self.encoder.encode_images(frames)


def items(sample, every: int) -> dict[str, list[FrameRow]]:
    manifest = json.loads(sample.manifest_path.read_text())
    out: dict[str, list[FrameRow]] = {}
    for v in manifest["videos"]:
        for t in range(0, 60, every):
            seg = next(s for s in v["segments"] if s["start"] <= t < s["end"])
            out.setdefault(v["video_path"], []).append(
                FrameRow(v["dataset"], v["video"], t, seg["phase"], seg["step"], float(t), v["video_path"]))
    return out


def ours(encoder, videos, texts, root, setting, batch, max_side) -> tuple[list, int]:
    labeller = Labeller(encoder, "image", setting, batch, max_side, k=1)
    labels, decoded = [], 0
    for rel, rows in videos.items():
        results, stats = labeller.label_video(root / rel, rows, texts[rows[0].dataset])
        labels += [(r["phases"][0], r["steps"][0]) for r in results]
        decoded += stats.decoded
    return labels, decoded


def naive(encoder, videos, texts, root, setting, batch, max_side) -> tuple[list, int]:
    labels, decoded = [], 0
    for rel, rows in videos.items():
        path = root / rel
        meta = video_index(path).meta()
        text = texts[rows[0].dataset]
        for r in rows:
            frames = decode_plan(path, clip_plan(meta, r.timestamp_s, setting), max_side=max_side)
            decoded += len(frames)
            emb = np.concatenate([as_embeddings(encoder.encode_images(frames[i:i + batch]), len(frames[i:i + batch]),
                                                "encode_images", str) for i in range(0, len(frames), batch)])
            mean = similarity(emb, text.embeddings, setting).mean(axis=0)
            got = []
            for level, lp in text.levels.items():
                got.append(argmax_label(lp.class_means(mean[text.spans[level]]), lp.labels))
            labels.append(tuple(got))
    return labels, decoded


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--every", type=int, default=1, help="seconds between evaluated frames (default 1)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-side", type=int, default=448)
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="zeroshot_speed_"))
    sample = build_surghi_sample(tmp / "sample")
    encoder = HFEncoder(str(build_hf_clip(tmp / "tiny-clip")))
    videos = items(sample, args.every)
    hierarchies = load_hierarchy_file(sample.hierarchy_path)
    prompts, _ = resolve_prompts(hierarchies, {ds: ("phases", "steps") for ds in hierarchies})
    texts = {ds: embed_texts(encoder, ds, prompts[ds], args.batch_size) for ds in hierarchies}
    setting = Setting()
    n_rows = sum(len(r) for r in videos.values())
    distinct = sum(len(set().union(*(clip_plan(video_index(sample.video_root / rel).meta(), r.timestamp_s,
                                                         setting).indices for r in rows))) for rel, rows in videos.items())
    runs: dict[str, list[float]] = {"ours": [], "naive": []}
    counts, labels = {}, {}
    for _ in range(args.repeat):
        for name, fn in (("ours", ours), ("naive", naive)):
            enc = Counting(encoder)
            t0 = time.perf_counter()
            labels[name], decoded = fn(enc, videos, texts, sample.video_root, setting, args.batch_size,
                                       args.max_side or None)
            runs[name].append(time.perf_counter() - t0)
            counts[name] = (decoded / distinct, enc.frames / distinct)
    same = sum(a == b for a, b in zip(labels["ours"], labels["naive"]))
    t_ours = statistics.median(runs["ours"])
    print(f"zero-shot labelling: {len(videos)} videos, {n_rows} evaluated frames (every {args.every} s), "
          f"{distinct} distinct frames in their clips; {setting.frames}-frame clips at {setting.fps:g} FPS; tiny "
          f"transformers CLIP (random weights) on the CPU, batch {args.batch_size}; median of {args.repeat}")
    print(f"  {'':24}{'decoded/distinct':>18}{'encoded/distinct':>18}{'seconds':>10}{'time / ours':>13}")
    for name, label in (("ours", "ours (surghi zeroshot)"), ("naive", "naive per-window loop")):
        t = statistics.median(runs[name])
        print(f"  {label:24}{counts[name][0]:>18.2f}{counts[name][1]:>18.2f}{t:>10.2f}{t / t_ours:>13.2f}")
    print(f"same labels: {same} of {n_rows}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
