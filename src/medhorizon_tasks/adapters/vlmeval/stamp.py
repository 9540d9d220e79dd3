"""Refusing stale predictions: VLMEvalKit reuses whatever it finds in ``<work-dir>/<model>/``.

``run.py`` writes every run of a model into the same flat folder and
``infer_data_job_video`` returns at once when a complete prediction file for
the (model, dataset) is already there -- with or without ``--reuse`` -- and
resumes from per-rank ``.pkl`` files of an interrupted run. A prediction made
by another version of this package (other prompts, frames or rules) or on
other data would be scored as if it were this run's.

So the launcher writes a stamp beside the predictions,
``<model>_<dataset>_medhorizon_stamp.json``: the package version, the data
version (:func:`medhorizon_tasks.benchmarks.data.data_version`, a hash of the
items' content), the preset's frame setting, ``--limit`` and, for a preset
that shows frames, the identity of every video the data refer to
(:func:`medhorizon_tasks.benchmarks.videos.video_identities`: a digest of all
of its bytes, or null while it is missing) -- so predictions made from other
videos (``MEDHORIZON_VIDEO_ROOT`` pointed elsewhere, a video replaced, or put
in place where it was missing) are never taken for this run's. Before a run, any
file VLMEvalKit would reuse for a (model, dataset) of this package must sit
beside a stamp equal to this run's; otherwise the run is refused (exit status
2) naming the files. Same stamp: the files are this run's own to reuse (a
resumed run, or ``--mode eval``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ... import __version__
from ...benchmarks.videos import video_identities, video_refs
from ...core.safeio import atomic_write_json
from .presets import Preset
from .sources import data_version_of, locate

__all__ = ["STAMP_SUFFIX", "expected_stamp", "reusable_files", "stamp_path", "stale_problems", "write_stamps"]

STAMP_SUFFIX = "_medhorizon_stamp.json"
PACKAGE = "medhorizon-tasks"


def expected_stamp(preset: Preset, limit: int | None, *, progress: bool = True) -> dict:
    source = locate(preset)
    videos = None
    if preset.shows_frames:
        _, refs = video_refs(preset.benchmark, source.data)
        videos = video_identities(source.video_root, refs, progress=progress, desc=f"{preset.name}: video identities")
    return {"package": PACKAGE, "version": __version__, "benchmark": preset.benchmark, "preset": preset.name,
            "setting": dict(preset.kwargs), "data_version": data_version_of(preset, source), "limit": limit,
            "videos": videos}


def _difference(key: str, have, want) -> str:
    """How a stamp's ``key`` differs from this run's, in words."""
    if key == "videos" and isinstance(have, dict) and isinstance(want, dict):
        changed = sorted(p for p in set(have) | set(want) if have.get(p) != want.get(p))
        said = [f"{p} ({'missing then' if have.get(p) is None else 'other bytes then'}"
                f"{', missing now' if want.get(p) is None else ''})" for p in changed[:3]]
        more = f", ... {len(changed)} in all" if len(changed) > 3 else ""
        return f"videos (made from other video files: {', '.join(said)}{more})"
    return f"{key} ({have!r} there, {want!r} now)"


def stamp_path(pred_root: Path, model: str, dataset: str) -> Path:
    return pred_root / f"{model}_{dataset}{STAMP_SUFFIX}"


def reusable_files(pred_root: Path, model: str, dataset: str) -> list[Path]:
    """The files of ``pred_root`` VLMEvalKit would reuse for (model, dataset), and our video outcomes."""
    stem = re.escape(f"{model}_{dataset}")
    pattern = re.compile(
        rf"^(?:{stem}\.(?:tsv|xlsx|json)"                            # the prediction file
        rf"|\d+_{stem}\.pkl"                                          # per-rank results (rank, world size)
        rf"|{stem}_(?:PREV|checkpoint)\.pkl"                          # retry / API checkpoints
        rf"|{stem}_(?:\d+frame|-?[\d.]+fps)_(?:no)?pack_(?:checkpoint|structs)\.pkl"
        rf"|{stem}_video_outcomes\.jsonl)$")
    try:
        names = os.listdir(pred_root)
    except OSError:
        return []
    return sorted(pred_root / n for n in names if pattern.match(n))


def _read(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def stale_problems(work_dir: Path, models: list[str], runs: dict[str, tuple[Preset, dict]]) -> list[str]:
    """One line per (model, dataset) whose reusable files are not this run's kind (``runs``: dataset
    name -> (preset, expected stamp))."""
    problems = []
    for model in models:
        root = work_dir / model
        for name, (_, want) in runs.items():
            files = reusable_files(root, model, name)
            if not files:
                continue
            have = _read(stamp_path(root, model, name))
            if have == want:
                continue
            if have is None:
                why = "they carry no medhorizon-tasks stamp (made by another version, or not by this launcher)"
            else:
                diff = [k for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
                why = "their stamp differs in " + ", ".join(_difference(k, have.get(k), want.get(k)) for k in diff)
            problems.append(f"{model} x {name}: {', '.join(f.name for f in files)} in {root}: {why}")
    return problems


def write_stamps(work_dir: Path, models: list[str], runs: dict[str, tuple[Preset, dict]]) -> None:
    for model in models:
        for name, (_, want) in runs.items():
            atomic_write_json(stamp_path(work_dir / model, model, name), want)
