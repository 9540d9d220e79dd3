"""``surghi zeroshot``: a dual encoder over every annotated frame, sharded by video, resumable.

The run is the same in one process or under ``accelerate launch``: the videos are sorted by (dataset,
video) and process ``r`` of ``n`` labels every ``n``-th of them from the ``r``-th on
(``RANK`` / ``WORLD_SIZE``); a video's result depends on nothing but the video, so the predictions are
the same whatever the number of processes. Each labelled video is journaled (one fsync'ed JSON line,
:class:`~medhorizon_tasks.core.journal.Journal`, one file per process, all read back), keyed by the
run's identity (encoder and its arguments, protocol setting, prompts, hierarchies, precision, batch
size, frame size), the video file's identity and its evaluated frames: a killed run, rerun, redoes
only the videos it had not finished, and anything that would change a result is never reused.
The process that finds every video journaled (the last to finish) writes the outputs
(:mod:`.zeroshot_outputs`).

A video that cannot be read gives its frames an error (scored wrong and counted, never an answer);
the pre-flight (the command's) stops a run with missing videos before the model is loaded, unless
``MEDHORIZON_ALLOW_VIDEO_ERRORS=1``.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock
from tqdm import tqdm

from ..benchmarks.surghi.frames import (
    FrameRow,
    hierarchy_beside,
    levels_of,
    load_hierarchy_file,
    read_frame_rows,
    resolve_hierarchies,
)
from ..benchmarks.surghi.hierarchy import Hierarchy
from ..benchmarks.surghi.prompts import DEFAULT_TEMPLATE, LevelPrompts, load_prompt_file, resolve_prompts
from ..benchmarks.surghi.zeroshot import Setting, encoder_kind
from ..benchmarks.videos import VideoCheckCache
from ..core.errors import DataError, VideoError
from ..core.journal import Journal, request_key, run_identity
from ..core.paths import resolve_video_path
from ..core.safeio import atomic_write_json, read_json
from ..core.video.prepared import DEFAULT_MAX_SIDE
from .zeroshot_outputs import FILES, write_outputs
from .zeroshot_video import Labeller, VideoStats, embed_texts

__all__ = ["ZeroShotInputs", "ZeroShotJob", "VideoUnit", "load_inputs", "videos_of", "shard_from_env", "run",
           "record_problem"]

JOURNAL_DIR = "journal"


@dataclass
class ZeroShotInputs:
    """The task items and everything they are labelled and scored with."""

    data: Path
    rows: list[FrameRow]
    hierarchy_file: Path | None
    hierarchies: dict[str, tuple[Hierarchy, str]]
    levels: dict[str, tuple[str, ...]]
    prompts: dict[str, dict[str, LevelPrompts]]
    notes: list[str] = field(default_factory=list)


def load_inputs(data: str | os.PathLike, *, hierarchy: str | os.PathLike | None = None,
                prompts: str | os.PathLike | None = None, template: str = DEFAULT_TEMPLATE) -> ZeroShotInputs:
    """Task items (``timestamp_s``, ``video_path``), their hierarchies (``--hierarchy``, else the file beside
    the items, else shipped or derived), and the prompts of every dataset and level; DataError naming
    every problem (a label outside its hierarchy, a prompt for a class the hierarchy lacks...)."""
    data = Path(data).expanduser()
    rows = read_frame_rows(data, role="items")
    hfile = Path(hierarchy).expanduser() if hierarchy else hierarchy_beside(data)
    hierarchies = resolve_hierarchies(rows, load_hierarchy_file(hfile) if hfile else None)
    problems = []
    for r in rows:
        h = hierarchies[r.dataset][0]
        if not h.is_phase(r.phase):
            problems.append(f"frame {r.uid}: phase {r.phase!r} is not a phase of the {r.dataset} hierarchy")
        if r.step is not None and not h.is_step(r.step):
            problems.append(f"frame {r.uid}: step {r.step!r} is not a step of the {r.dataset} hierarchy")
    if problems:
        raise DataError(problems, source=f"items {data}")
    levels = levels_of(rows)
    user = load_prompt_file(prompts) if prompts else None
    resolved, notes = resolve_prompts({ds: h for ds, (h, _) in hierarchies.items()}, levels, user=user,
                                      user_source=str(prompts) if prompts else None, template=template)
    return ZeroShotInputs(data, rows, hfile, hierarchies, levels, resolved, notes)


@dataclass
class ZeroShotJob:
    inputs: ZeroShotInputs
    video_root: Path
    out: Path
    encoder: Any
    encoder_spec: str
    setting: Setting
    encoder_args: dict = field(default_factory=dict)
    device: str = "cpu"
    dtype: str = "float32"
    batch_size: int = 32
    max_side: int | None = DEFAULT_MAX_SIDE
    top_k: int = 5
    model: str = ""
    size: str = "unknown"
    shard: tuple[int, int] = (0, 1)
    progress: bool = True

    def identity(self) -> tuple[str, dict]:
        """Everything that changes a result (the number of processes does not)."""
        prompts = {ds: {lv: [list(lp.labels), [list(p) for p in lp.prompts]] for lv, lp in levels.items()}
                   for ds, levels in sorted(self.inputs.prompts.items())}
        hierarchies = {ds: h.to_json() for ds, (h, _) in sorted(self.inputs.hierarchies.items())}
        return run_identity(self.encoder_spec, self.encoder_args, setting=self.setting.to_json(),
                            prompts=request_key(prompts), hierarchies=request_key(hierarchies),
                            device=self.device.split(":")[0], dtype=self.dtype, batch_size=self.batch_size,
                            max_side=self.max_side, top_k=self.top_k)


@dataclass(frozen=True)
class VideoUnit:
    """One video of the items: the unit of sharding and of the journal."""

    dataset: str
    video: str
    video_path: str
    rows: tuple[int, ...]  # positions in the items


def videos_of(rows: list[FrameRow]) -> list[VideoUnit]:
    """The items' videos, sorted by (dataset, video); DataError when one video is given two files."""
    groups: dict[tuple[str, str], list[int]] = {}
    paths: dict[tuple[str, str], str] = {}
    problems = []
    for i, r in enumerate(rows):
        key = (r.dataset, r.video)
        if paths.setdefault(key, r.video_path or "") != r.video_path:
            problems.append(f"frame {r.uid}: video_path {r.video_path!r}, but other frames of video {r.video} "
                            f"say {paths[key]!r}")
        groups.setdefault(key, []).append(i)
    if problems:
        raise DataError(problems, source="items")
    return [VideoUnit(ds, v, paths[(ds, v)], tuple(sorted(ix, key=lambda i: rows[i].frame)))
            for (ds, v), ix in sorted(groups.items())]


def shard_from_env() -> tuple[int, int]:
    """``(rank, world)`` of this process under ``accelerate launch`` / ``torchrun``, else ``(0, 1)``."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    rank = int(os.environ.get("RANK", "0") or 0)
    return (rank, world) if 0 <= rank < world else (0, 1)


def _video_key(ident: str, job: ZeroShotJob, unit: VideoUnit) -> str:
    rows = job.inputs.rows
    path = resolve_video_path(job.video_root, unit.video_path, uid=rows[unit.rows[0]].uid)
    return request_key(ident, unit.dataset, unit.video, unit.video_path, VideoCheckCache.identity(path),
                       [[rows[i].frame, rows[i].timestamp_s] for i in unit.rows])


def _journal(job: ZeroShotJob, ident: str) -> Journal:
    folder = job.out / JOURNAL_DIR
    own = folder / f"rank-{job.shard[0]}.jsonl"
    others = sorted(p for p in folder.glob("rank-*.jsonl") if p != own) if folder.is_dir() else []
    return Journal(own, read_also=others, identity=ident)


def record_problem(rec, job: ZeroShotJob, unit: VideoUnit) -> str | None:
    """What is wrong with a journaled record of ``unit`` (valid JSON under the right key, but not what
    :func:`_label` writes: edited by hand, a disk fault, another version's shape), or None when it is sound.
    A damaged record is never trusted: the video is labelled again."""
    if not isinstance(rec, dict) or set(rec) != {"results", "error", "stats"}:
        return "not a record of results, error and stats"
    stats = rec["stats"]
    if not isinstance(stats, dict) or not set(stats) <= set(vars(VideoStats())) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in stats.values()):
        return "its stats are not counts"
    if rec["error"] is not None:
        return None if isinstance(rec["error"], str) and rec["results"] is None else "an error with results"
    results = rec["results"]
    if not isinstance(results, list) or len(results) != len(unit.rows):
        return f"{len(results) if isinstance(results, list) else 'no'} results for {len(unit.rows)} frames"
    levels = job.inputs.prompts[unit.dataset]
    for k, res in enumerate(results):
        if not isinstance(res, dict) or set(res) != set(levels):
            return f"result {k} does not have the levels {', '.join(levels)}"
        for level, got in res.items():
            labels = levels[level].labels
            ok = (isinstance(got, list) and len(got) == 2 and got[0] in labels and isinstance(got[1], list)
                  and all(isinstance(t, list) and len(t) == 2 and t[0] in labels and isinstance(t[1], (int, float))
                          and not isinstance(t[1], bool) and math.isfinite(t[1]) for t in got[1]))
            if not ok:
                return f"result {k}: its {level} are not a label of the level with its top classes and scores"
    return None


def _damaged(job: ZeroShotJob, journal: Journal, keys: dict, units: list[VideoUnit]) -> dict:
    """``{unit: what is wrong}`` for the units whose journaled record is damaged (:func:`record_problem`)."""
    out = {}
    for u in units:
        if keys[u] in journal:
            why = record_problem(journal.get(keys[u]), job, u)
            if why:
                out[u] = why
    return out


def _label(job: ZeroShotJob, labeller: Labeller, texts: dict, unit: VideoUnit, bar) -> dict:
    rows = [job.inputs.rows[i] for i in unit.rows]
    try:
        path = resolve_video_path(job.video_root, unit.video_path, uid=rows[0].uid)
        results, stats = labeller.label_video(path, rows, texts[unit.dataset], bar.update)
    except VideoError as exc:
        bar.update(len(rows))
        return {"results": None, "error": str(exc), "stats": vars(VideoStats())}
    return {"results": results, "error": None, "stats": vars(stats)}


def run(job: ZeroShotJob) -> dict | None:
    """Label this process's share of the videos, then, if every video is journaled, write the outputs.
    Returns the summary when this process wrote them, else None (another process will)."""
    kind = encoder_kind(job.encoder)
    ident, description = job.identity()
    units = videos_of(job.inputs.rows)
    rank, world = job.shard
    mine = units[rank::world]
    keys = {u: _video_key(ident, job, u) for u in units}
    journal = _journal(job, ident)
    damaged = _damaged(job, journal, keys, mine)
    for u, why in damaged.items():
        print(f"warning: surghi zeroshot: the journal's record of video {u.video} ({u.dataset}) in "
              f"{job.out / JOURNAL_DIR} is damaged ({why}); not trusted: the video is labelled again", file=sys.stderr)
    todo = [u for u in mine if keys[u] not in journal or u in damaged]
    labeller = Labeller(job.encoder, kind, job.setting, job.batch_size, job.max_side, job.top_k)
    needed = sorted({u.dataset for u in todo})
    texts = {ds: embed_texts(job.encoder, ds, job.inputs.prompts[ds], job.batch_size) for ds in needed}
    total = sum(len(u.rows) for u in mine)
    label = f"surghi zeroshot [{rank + 1}/{world}]" if world > 1 else "surghi zeroshot"
    with tqdm(total=total, unit="frame", desc=label, disable=not job.progress, file=sys.stderr) as bar:
        bar.update(sum(len(u.rows) for u in mine if u not in todo))
        for unit in todo:
            rec = _label(job, labeller, texts, unit, bar)
            journal.add(keys[unit], rec, replace=unit in damaged, dataset=unit.dataset, video=unit.video)
    this_run = {"videos_labelled": len(todo), "videos_reused": len(mine) - len(todo), "shard": f"{rank}/{world}"}
    folder = job.out / JOURNAL_DIR
    with FileLock(str(folder / ".merge.lock")):
        journal = _journal(job, ident)
        if any(keys[u] not in journal for u in units) or _damaged(job, journal, keys, units):
            return None  # another process labels the rest (a damaged record: the process whose video it is)
        digest = request_key(ident, [keys[u] for u in units], job.model, job.size)
        marker = folder / "merged.json"
        if _marker_digest(marker) == digest and all((job.out / name).is_file() for name in FILES.values()):
            if already_reported(job.shard, this_run):
                return None
            return {"already_written": True, "this_run": this_run}
        summary = write_outputs(job, units, {u: journal.get(keys[u]) for u in units}, description, this_run)
        atomic_write_json(marker, {"digest": digest})
        return summary


def already_reported(shard: tuple[int, int], this_run: dict) -> bool:
    """Whether outputs found up to date were already written and printed by another process of this run:
    under several processes, one that worked on videos in this run finds them written by the process that
    finished last; one that had nothing to do leaves the printing to the first process (a rerun of a
    finished run prints the report once, not once per process)."""
    rank, world = shard
    worked = any(v for k, v in this_run.items() if k.startswith("videos_") and k != "videos_reused")
    return world > 1 and (worked or rank != 0)


def _marker_digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        value = read_json(path)
    except DataError:
        return None  # a damaged marker: the outputs are simply written again
    return value.get("digest") if isinstance(value, dict) else None
