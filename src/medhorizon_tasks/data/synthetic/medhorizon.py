"""A small synthetic benchmark in the MedHorizon release layout.

The real MedHorizon release is a JSONL file with one record per *video* and
its four-way multiple-choice questions nested under ``qa``; the evidence for
each answer lies in a few tiny frame windows of a full-length clinical video.
This module generates, deterministically and in a few seconds, a stand-in with
the same layout whose answers are *drawn into the frames*: every frame of a
question's evidence window is :func:`~medhorizon_tasks.data.synthetic.visual_code.encode_code`
``(tag, answer_index)`` and every other frame is background, on which
:func:`~medhorizon_tasks.data.synthetic.visual_code.decode_code` returns ``None``. A probe
program that reads the sampled frames therefore answers a question correctly
exactly when the frame sampler delivered one of its evidence frames. Each
question's text ends with `` [probe #<tag>]`` so the probe knows which code
belongs to which question.

Contents (16 videos, 80 questions):

* 2 videos for each of the 8 sources (AutoLaparo, Galar, GraSP, MultiBypass,
  PitVQA, REAL-Colon, TMVP, US-Study);
* 12 short videos (2-8 min) and one 12 min video at 128x96, 5 fps, and three
  long ones (60, 75, 90 min) at 64x48, 2 fps - so all three duration tiers
  (``<10min``, ``10-60min``, ``>=1h``) occur;
* all 13 task codes, >= 4 questions each; answers balanced over A-D; options
  as a plain list of 4 strings, or for every 7th question as a mapping
  ``{"A": "A. ...", ...}``;
* evidence windows of 3-8 s (1 or 2 per question, never overlapping within a
  video); each long video has a window in its last tenth (one ends on the very
  last frame) and every video one in its first half (one starts at frame 0);
  in the long videos every question's evidence is < 0.5% of the frames.

Use :func:`build_synthetic` (cached, multi-process safe) to get the files and
:func:`plan_synthetic` for the JSONL records alone (pure, cheap).

A build's ``manifest.json`` lists every file the builder wrote (``files``),
and a rebuild (another seed or generator version, or ``force``) removes or
replaces only those: files beside the build (a notes file, the Sureon and
SurgHiBench samples that default to sub-folders of the same folder) are kept,
and one inside the build's own entries (``videos/``) makes the build refuse
with a :class:`~medhorizon_tasks.core.errors.DataError` naming it, touching
nothing (see :func:`~.folders.build_folder`, which those samples use too).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...core.settings import env_text

# GENERATOR_VERSION is read as layout.GENERATOR_VERSION, so that replacing it there reaches the build too
# (see .layout); the names imported below but not used here stay importable from here (__all__)
from . import layout
from .folders import MANIFEST_NAME, build_folder, manifest_files, sample_is_valid
from .layout import GENERATOR_VERSION, LETTERS, SYNTHETIC_SOURCES, SYNTHETIC_TASKS, _video_spec
from .questions import jsonl_bytes, plan_synthetic
from .video_writer import count_frames, pick_codec, write_video
from .visual_code import BackgroundGenerator, encode_code

__all__ = [
    "GENERATOR_VERSION",
    "SYNTHETIC_JSONL_NAME",
    "SYNTHETIC_SOURCES",
    "SYNTHETIC_TASKS",
    "SyntheticBenchmark",
    "build_folder",
    "build_synthetic",
    "count_frames",
    "default_synthetic_dir",
    "pick_codec",
    "plan_synthetic",
    "write_video",
]

GENERATOR = "medhorizon_tasks.data.synthetic"
SYNTHETIC_JSONL_NAME = "medhorizon_synthetic.jsonl"


# ---------------------------------------------------------------------------
# Frames of a planned video
# ---------------------------------------------------------------------------


def frame_codes(record: dict[str, Any]) -> np.ndarray:
    """Per native frame: ``tag * 4 + letter_index`` inside evidence windows, else -1.

    A window shows its question's answer, except in order items, whose
    ``synthetic_codes`` give one (tag, letter_index) per window (chronological).
    """
    codes = np.full(int(record["num_frames"]), -1, dtype=np.int16)
    for q in record["qa"]:
        per_window = q.get("synthetic_codes") or [[q["synthetic_tag"], LETTERS.index(q["answer"])]] * len(
            q["evidence"]["frame_windows"])
        for (s, e), (tag, letter_index) in zip(q["evidence"]["frame_windows"], per_window):
            code = int(tag) * 4 + int(letter_index)
            if (codes[s : e + 1] >= 0).any():
                raise ValueError(f"overlapping evidence windows in {record['key']}")
            codes[s : e + 1] = code
    return codes


def render_frames(record: dict[str, Any], seed: int = 0) -> Iterator[np.ndarray]:
    """The RGB frames of a planned video, in order."""
    width, height, fps, style, pos = _video_spec(record["key"])
    background = BackgroundGenerator(
        height, width, seed=int(seed) * 1000 + pos, style=style
    )
    code_frames: dict[int, np.ndarray] = {}
    for i, code in enumerate(frame_codes(record).tolist()):
        if code < 0:
            yield background(i / fps)
        else:
            frame = code_frames.get(code)
            if frame is None:
                frame = code_frames[code] = encode_code(
                    code >> 2, code & 3, height, width
                )
            yield frame


# ---------------------------------------------------------------------------
# Building / caching
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticBenchmark:
    root: Path  # the output folder
    data_path: Path  # root / "medhorizon_synthetic.jsonl"
    video_root: Path  # root / "videos"

    @classmethod
    def at(cls, root: str | Path) -> SyntheticBenchmark:
        root = Path(root)
        return cls(
            root=root, data_path=root / SYNTHETIC_JSONL_NAME, video_root=root / "videos"
        )

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def records(self) -> list[dict[str, Any]]:
        """The JSONL records."""
        with open(self.data_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def video_path(self, record: dict[str, Any]) -> Path:
        return self.video_root / record["video_path"]


def default_synthetic_dir() -> Path:
    """``$MEDHORIZON_SYNTHETIC_DIR``, else ``~/.cache/medhorizon_tasks/synthetic/v<GENERATOR_VERSION>``."""
    env = env_text("MEDHORIZON_SYNTHETIC_DIR")
    if env:
        return Path(env).expanduser()
    return (
        Path.home()
        / ".cache"
        / "medhorizon_tasks"
        / "synthetic"
        / f"v{layout.GENERATOR_VERSION}"
    )


def _legacy_files(manifest: dict) -> list[str] | None:
    """Manifests from before the "files" list: the same files, named by "videos"."""
    videos = manifest.get("videos")
    if manifest.get("generator") != GENERATOR or not isinstance(videos, list):
        return None
    return [SYNTHETIC_JSONL_NAME, *(f"videos/{v}" for v in videos)]


def _owned_files(root: Path) -> set[str] | None:
    """The files (relative POSIX paths) that the synthetic builder wrote in ``root``, from its manifest."""
    return manifest_files(root, GENERATOR, _legacy_files)


def _is_valid(root: Path, seed: int) -> bool:
    return sample_is_valid(root, seed, layout.GENERATOR_VERSION, _owned_files, version_key="generator_version")


def _build_into(tmp: Path, seed: int, progress: bool) -> dict[str, Any]:
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    records = plan_synthetic(seed)
    bench = SyntheticBenchmark.at(tmp)
    bench.video_root.mkdir(parents=True, exist_ok=True)
    codec = pick_codec()
    total_bytes = 0
    for record in tqdm(
        records, desc="MedHorizon synthetic videos", unit="video", disable=not progress
    ):
        width, height, fps, _style, _pos = _video_spec(record["key"])
        path = bench.video_path(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        written = write_video(
            path, render_frames(record, seed), fps, width, height, codec=codec
        )
        decoded = count_frames(path)
        if not written == decoded == record["num_frames"]:
            raise RuntimeError(
                f"{path}: planned {record['num_frames']} frames, wrote {written}, decoded {decoded}"
            )
        total_bytes += path.stat().st_size
    data = jsonl_bytes(records)
    bench.data_path.write_bytes(data)
    total_bytes += len(data)
    manifest = {
        "generator": GENERATOR,
        "generator_version": layout.GENERATOR_VERSION,
        "seed": seed,
        "num_videos": len(records),
        "num_questions": sum(len(r["qa"]) for r in records),
        "num_frames": sum(r["num_frames"] for r in records),
        "codec": codec,
        "total_bytes": total_bytes,
        "videos": [r["video_path"] for r in records],
        # everything written here, the only files a rebuild may remove
        "files": [SYNTHETIC_JSONL_NAME, MANIFEST_NAME, *(f"videos/{r['video_path']}" for r in records)],
        # informational only; not part of the cache identity
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(time.perf_counter() - t0, 3),
    }
    # the manifest is written last: its presence marks a complete build
    (tmp / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
    )
    return manifest


def build_synthetic(
    out_dir: str | Path | None = None,
    *,
    seed: int = 0,
    force: bool = False,
    progress: bool = True,
) -> SyntheticBenchmark:
    """Generate (or reuse) the synthetic benchmark in ``out_dir`` and describe it.

    ``out_dir`` defaults to :func:`default_synthetic_dir`. A build whose
    ``manifest.json`` records the same generator version and seed is reused
    as is unless ``force`` (files a user added to it are left alone). A
    rebuild removes or replaces only the files the previous build's manifest
    lists, keeps what lies beside them, and refuses with
    :class:`~medhorizon_tasks.core.errors.DataError` when something else sits
    inside ``videos/`` or where the build writes, or when ``out_dir`` is
    neither such a build nor empty (see :func:`~.folders.build_folder`).
    Builds go to a temporary sibling folder and are moved into place by
    renames; a file lock (``<out_dir>.lock``) makes concurrent processes
    build it once.
    """
    seed = int(seed)
    root = (
        Path(out_dir).expanduser() if out_dir is not None else default_synthetic_dir()
    )
    root = root.absolute()
    build_folder(root, write=lambda tmp: _build_into(tmp, seed, progress), valid=lambda p: _is_valid(p, seed),
                 owned=_owned_files, what="synthetic MedHorizon build", force=force)
    return SyntheticBenchmark.at(root)
