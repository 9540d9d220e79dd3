"""A synthetic SurgHiBench sample: phase/step timelines drawn as visual codes, on a tree and a DAG.

Two datasets, three 60-second videos each (128x96, 4 fps), labelled at 1 FPS (annotation
frame ``k`` is at ``k`` s); every third annotation frame is evaluated (20 per video, 120 in
all). Six videos, because videos are the unit of the leaderboard's paired test: with n videos
no difference can reach p below 2 / 2^n.

* ``SynthTree``: 3 phases, 7 steps, every step in exactly one phase (tree-likeness 100%);
* ``SynthDAG``: 4 phases, 6 steps, three of which recur in two or three phases
  (tree-likeness 50%), so "sibling" (the predicted step belongs to the ground-truth
  phase) and "the predicted step's phase" differ.

Each video is a sequence of segments (one phase, one of its steps, 4-9 s).  Every frame
of a segment shows the payload ``phase_index << 5 | step_index`` (indices into the
dataset's phase and step lists, in the order of ``hierarchies.json``) as the visual code
of :mod:`.visual_code`; one 10-second segment in every video but the first of each dataset is
drawn *without* a code (background only), so a frame-reading probe must refuse there.  A probe
that labels each evaluated frame with the code seen most often in its window is exact
inside long segments and confuses neighbours at segment boundaries (sibling errors within a
phase, cousin errors across phases): the hierarchy-aware metrics have something to measure.

``manifest.json`` also records each video's segments (start, end, phase, step, coded), so
tests can check predictions against what each window shows, and the files the builder
wrote: a rebuild (another seed) removes or replaces only those, keeps whatever lies beside
them, and refuses, naming it, when something else sits inside ``videos/`` or where the
sample writes (see :func:`~medhorizon_tasks.data.synthetic.folders.build_folder`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .folders import build_folder, manifest_files, sample_is_valid
from .medhorizon import default_synthetic_dir
from .video_writer import write_video
from .visual_code import BackgroundGenerator, encode_code

SAMPLE_VERSION = 2
GENERATOR = "medhorizon_tasks.data.synthetic_surghi"
_DATA_FILES = ("annotations.jsonl", "hierarchies.json")
MANIFEST_NAME = "manifest.json"
VIDEOS_PER_DATASET = 3
FPS, WIDTH, HEIGHT, SECONDS = 4.0, 128, 96, 60
EVAL_EVERY_S = 3
BLANK_S = 10

HIERARCHIES: dict[str, dict] = {
    "SynthTree": {
        "phases": {
            "preparation": ["trocar placement", "exposure"],
            "dissection": ["triangle dissection", "clipping", "cutting"],
            "closure": ["suturing", "trocar removal"],
        },
        "semantic_groups": {"port handling": ["trocar placement", "trocar removal"],
                            "tissue division": ["triangle dissection", "cutting"]},
    },
    "SynthDAG": {
        "phases": {
            "access": ["inspection"],
            "resection": ["inspection", "dissection", "stapling"],
            "reconstruction": ["inspection", "stapling", "anastomosis", "suturing"],
            "closure": ["suturing", "irrigation"],
        },
        "semantic_groups": {"joining": ["stapling", "anastomosis", "suturing"]},
    },
}


@dataclass(frozen=True)
class SurghiSample:
    root: Path
    annotations_path: Path  # task items: dataset, video, frame, phase, step, timestamp_s, video_path
    hierarchy_path: Path    # {dataset: {"phases": ..., "semantic_groups": ...}}
    video_root: Path
    manifest_path: Path


def _labels(h: dict) -> tuple[list[str], list[str]]:
    phases = list(h["phases"])
    steps: list[str] = []
    for ss in h["phases"].values():
        steps.extend(s for s in ss if s not in steps)
    return phases, steps


def plan_sample(seed: int = 0) -> list[dict]:
    """Videos with their segments; a pure function of ``seed``."""
    rng = np.random.default_rng([seed, SAMPLE_VERSION, 7])
    videos = []
    for ds, h in HIERARCHIES.items():
        phases, steps = _labels(h)
        for v in range(VIDEOS_PER_DATASET):
            segs, t = [], 0
            blank_done = v == 0
            while t < SECONDS:
                for p in phases:
                    for s in rng.permutation(h["phases"][p])[: int(rng.integers(1, 3))]:
                        if t >= SECONDS:
                            break
                        d = int(rng.integers(4, 10))
                        coded = True
                        if not blank_done and t >= 20:
                            d, coded, blank_done = BLANK_S, False, True
                        d = min(d, SECONDS - t)
                        segs.append({"start": t, "end": t + d, "phase": p, "step": str(s), "coded": coded,
                                     "code": (phases.index(p) << 5) | steps.index(str(s))})
                        t += d
            videos.append({"dataset": ds, "video": f"{ds.lower()}_{v + 1:02d}",
                           "video_path": f"{ds.lower()}/{ds.lower()}_{v + 1:02d}.mp4", "segments": segs})
    return videos


def annotation_rows(video: dict) -> list[dict]:
    """The evaluated frames of one video (task items)."""
    rows = []
    for k in range(1, SECONDS, EVAL_EVERY_S):
        seg = next(s for s in video["segments"] if s["start"] <= k < s["end"])
        rows.append({"dataset": video["dataset"], "video": video["video"], "frame": k, "timestamp_s": float(k),
                     "phase": seg["phase"], "step": seg["step"], "video_path": video["video_path"]})
    return rows


def _render(video: dict, seed: int):
    bg = BackgroundGenerator(HEIGHT, WIDTH, seed=seed)
    for i in range(int(FPS * SECONDS)):
        t = i / FPS
        seg = next(s for s in video["segments"] if s["start"] <= t < s["end"])
        if seg["coded"]:
            yield encode_code(seg["code"] >> 2, seg["code"] & 3, HEIGHT, WIDTH)
        else:
            yield bg(t)


def _legacy_files(manifest: dict) -> list[str] | None:
    """Manifests from before the "files" list: the data files and one video per entry of "videos"."""
    videos = manifest.get("videos")
    if (set(manifest) == {"version", "seed", "fps", "frames", "videos"} and isinstance(videos, list)
            and all(isinstance(v, dict) and isinstance(v.get("video_path"), str) for v in videos)):
        return [*_DATA_FILES, *(f"videos/{v['video_path']}" for v in videos)]
    return None


def _owned_files(root: Path) -> set[str] | None:
    """The files (relative POSIX paths) that this builder wrote in ``root``, from its manifest."""
    return manifest_files(root, GENERATOR, _legacy_files)


def _is_valid(root: Path, seed: int) -> bool:
    return sample_is_valid(root, seed, SAMPLE_VERSION, _owned_files)


def _write(tmp: Path, seed: int) -> None:
    videos = plan_sample(seed)
    rows, files = [], []
    for k, video in enumerate(videos):
        rel = f"videos/{video['video_path']}"
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_video(path, _render(video, seed * 1000 + k), FPS, WIDTH, HEIGHT)
        rows.extend(annotation_rows(video))
        files.append(rel)
    (tmp / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp / "hierarchies.json").write_text(json.dumps(HIERARCHIES, indent=2))
    files += [*_DATA_FILES, MANIFEST_NAME]
    # written last: only a complete build has a manifest
    (tmp / MANIFEST_NAME).write_text(json.dumps({"generator": GENERATOR, "version": SAMPLE_VERSION, "seed": seed,
                                                 "fps": FPS, "frames": len(rows), "videos": videos,
                                                 "files": files}, indent=1))


def build_surghi_sample(out_dir: str | os.PathLike | None = None, *, seed: int = 0) -> SurghiSample:
    """Write the sample (cached; safe when several processes build it at once).

    A rebuild removes or replaces only the files the previous sample's
    manifest lists and keeps what lies beside them; something else inside
    ``videos/``, or a folder that is neither a sample nor empty, raises
    :class:`~medhorizon_tasks.core.errors.DataError` naming it, touching nothing.
    """
    root = Path(out_dir) if out_dir else default_synthetic_dir() / f"surghi_v{SAMPLE_VERSION}"
    build_folder(root, write=lambda tmp: _write(tmp, seed), valid=lambda p: _is_valid(p, seed),
                 owned=_owned_files, what="synthetic SurgHiBench sample")
    return SurghiSample(root, root / "annotations.jsonl", root / "hierarchies.json", root / "videos",
                        root / MANIFEST_NAME)
