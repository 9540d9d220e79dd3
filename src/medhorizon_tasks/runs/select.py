"""``medhorizon-tasks select``: the relevance pre-pass of query-aware frame selectors, sharded by video, resumable.

For every video of the MedHorizon items: its candidate frames (the ``fps`` grid over the whole video,
:func:`~medhorizon_tasks.core.sampling.fps_candidates`) are decoded once, a bounded block at a time,
and embedded once by the scorer (:mod:`medhorizon_tasks.adapters.encoders.scorers`); for a dual encoder
each question of the video is embedded once and a frame's relevance to a question is the cosine of the
two; a matching head (``score_pairs``) scores every frame-question pair from the same decoded block. Every selector then picks each item's frames at every budget
(:func:`~medhorizon_tasks.core.selectors.plan_selection`; a selector's answer is checked there, and a bad one
ends the run with one message naming the selector and the video, before anything of that video is journaled),
the uniform plan of each budget (the ``medhorizon_frames<N>`` tasks' plan) beside them. With ``needle`` (the synthetic benchmark) the selected frames are decoded and shown to the
needle probe (:func:`~medhorizon_tasks.data.synthetic.probes.needle_answer`) with the task's prompt,
and its answer is scored by the package's rule.

Sharding, journal and merge are :mod:`.zeroshot`'s: videos sorted by key, process ``r`` of ``n`` takes
every ``n``-th from the ``r``-th (``RANK`` / ``WORLD_SIZE`` under ``accelerate launch``); each video's
selections are one fsync'ed journal line keyed by the run's identity (scorer and its arguments,
selectors with their versions, budgets, fps, frame size, precision), the file's identity and its
questions; a killed run, rerun, redoes only unfinished videos; the process that finds every video
journaled writes the outputs (:mod:`.select_outputs`). A video that cannot be read is an error of its
items (no selection, counted), never a silent uniform plan.

The outputs are "up to date" only when they are what this run wrote: ``journal/merged.json`` records the
run's digest and each output file's identity (:func:`~medhorizon_tasks.core.file_identity.file_identity`,
all of its bytes); a file edited, replaced or removed since is written again from the journal, and the
rerun says which.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock
from tqdm import tqdm

from ..benchmarks.medhorizon.protocol import build_prompt, video_file, video_index
from ..benchmarks.medhorizon.release import Item
from ..benchmarks.medhorizon.scoring import score_item
from ..benchmarks.surghi.zeroshot import as_embeddings, cosine_scores
from ..benchmarks.videos import VideoCheckCache
from ..core.errors import DataError, VideoError
from ..core.file_identity import file_identity
from ..core.journal import Journal, request_key, run_identity
from ..core.safeio import atomic_write_json, read_json
from ..core.sampling import FramePlan, fps_candidates
from ..core.selectors import UniformSelect, plan_selection, relevance_scale
from ..core.video.decode import decode_plan
from ..core.video.prepared import DEFAULT_MAX_SIDE
from .select_outputs import FILES, selection_key, write_outputs
from .zeroshot import already_reported, shard_from_env

__all__ = ["SelectJob", "selection_key", "run", "shard_from_env"]

JOURNAL_DIR = "journal"


@dataclass
class SelectJob:
    items: list[Item]
    video_root: Path
    out: Path
    scorer: Any
    scorer_spec: str
    selectors: list  # FrameSelector values, one per (selector, budget); the uniform baseline is added
    scorer_args: dict = field(default_factory=dict)
    fps: float = 1.0
    device: str = "cpu"
    dtype: str = "float32"
    batch_size: int = 32
    max_side: int | None = DEFAULT_MAX_SIDE
    needle: bool = False
    recall: bool = False
    shard: tuple[int, int] = (0, 1)
    progress: bool = True
    scale: str = ""  # what the scorer's relevance is (core.selectors.relevance_scale); "" = ask the scorer

    def __post_init__(self):
        self.scale = self.scale or relevance_scale(self.scorer)
        budgets = sorted({s.budget for s in self.selectors})
        have = {selection_key(s.name, s.budget) for s in self.selectors}
        self.selectors = list(self.selectors) + [UniformSelect(b) for b in budgets
                                                 if selection_key("uniform", b) not in have]

    def identity(self) -> tuple[str, dict]:
        # every parameter of a selector, not only what describe() shows (a --selector-arg changes the identity)
        sels = [f"{selection_key(s.name, s.budget)}:{s.describe()}@{getattr(s, 'version', '?')}:"
                + request_key(dict(sorted(getattr(s, "__dict__", {}).items())))[:12] for s in self.selectors]
        return run_identity(self.scorer_spec, self.scorer_args, selectors=sels, fps=self.fps,
                            device=self.device.split(":")[0], dtype=self.dtype, batch_size=self.batch_size,
                            max_side=self.max_side, needle=self.needle, relevance_scale=self.scale)


@dataclass(frozen=True)
class VideoUnit:
    video_key: str
    video_path: str
    items: tuple[int, ...]  # positions in the items


def videos_of(items: list[Item]) -> list[VideoUnit]:
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it.video_key, []).append(i)
    return [VideoUnit(k, items[ix[0]].video_path, tuple(ix)) for k, ix in sorted(groups.items())]


def _video_key(ident: str, job: SelectJob, unit: VideoUnit) -> str:
    items = [job.items[i] for i in unit.items]
    path = video_file(items[0], job.video_root)
    return request_key(ident, unit.video_key, unit.video_path, VideoCheckCache.identity(path),
                       [[it.uid, it.question, list(it.options)] for it in items])


def _journal(job: SelectJob, ident: str) -> Journal:
    folder = job.out / JOURNAL_DIR
    own = folder / f"rank-{job.shard[0]}.jsonl"
    others = sorted(p for p in folder.glob("rank-*.jsonl") if p != own) if folder.is_dir() else []
    return Journal(own, read_also=others, identity=ident)


def _decode(path: Path, meta, indices: np.ndarray, job: SelectJob, uid: str, index) -> np.ndarray:
    times = meta.times_of(np.asarray(indices, dtype=np.int64))
    plan = FramePlan(tuple(int(i) for i in indices), tuple(float(t) for t in times), "select")
    return decode_plan(path, plan, max_side=job.max_side, uid=uid, index=index)


def _embed_candidates(job: SelectJob, path: Path, meta, cands: np.ndarray, uid: str, index,
                      questions: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """Every candidate frame decoded once and embedded once, a bounded block of frames at a time; with a
    matching head (``score_pairs``), each frame's relevance to every question from the same decoded block."""
    parts, pairs = [], []
    block = 4 * job.batch_size
    pair_scorer = getattr(job.scorer, "score_pairs", None)
    for start in range(0, len(cands), block):
        frames = _decode(path, meta, cands[start:start + block], job, uid, index)
        for b in range(0, len(frames), job.batch_size):
            chunk = frames[b:b + job.batch_size]
            name_of = lambda i, s=start + b: f"candidate frame {int(cands[s + i])} of {path}"  # noqa: E731
            parts.append(as_embeddings(job.scorer.encode_images(chunk), len(chunk), "encode_images", name_of,
                                       parts[0].shape[1] if parts else None))
            if pair_scorer is not None:
                pairs.append(as_embeddings(pair_scorer(chunk, questions), len(chunk), "score_pairs", name_of,
                                           len(questions)))
        del frames
    return np.concatenate(parts), (np.concatenate(pairs) if pair_scorer is not None else None)


def select_video(job: SelectJob, unit: VideoUnit) -> dict:
    """One video's selections: ``{"candidates", "items": {uid: {key: {indices, timestamps, policy[,
    needle]}}}, "error"}``."""
    items = [job.items[i] for i in unit.items]
    try:
        path = video_file(items[0], job.video_root)
        index = video_index(path, items[0].uid)
        meta = index.meta()
        cands = fps_candidates(meta, job.fps)
        questions = [it.question for it in items]
        emb, scores = _embed_candidates(job, path, meta, cands, items[0].uid, index, questions)
        if scores is None:  # a dual encoder: relevance = cosine of frame and question embeddings
            text = as_embeddings(job.scorer.encode_text(questions), len(items), "encode_text",
                                 lambda i: f"the question of item {items[i].uid}", emb.shape[1])
            scores = cosine_scores(emb, text)
        out: dict[str, dict] = {}
        for q, it in enumerate(items):
            per: dict[str, dict] = {}
            for sel in job.selectors:
                plan = plan_selection(meta, sel, scores[:, q], emb, job.fps, video=f"{unit.video_key} (item {it.uid})",
                                      scale=job.scale)
                rec = {"indices": list(plan.indices), "timestamps": list(plan.timestamps), "policy": plan.policy}
                if job.needle:
                    rec["needle_correct"] = _needle(path, meta, plan, it, job, index)
                per[selection_key(sel.name, sel.budget)] = rec
            out[it.uid] = per
    except VideoError as exc:
        return {"candidates": None, "items": None, "error": str(exc)}
    return {"candidates": int(len(cands)), "items": out, "error": None}


def _needle(path: Path, meta, plan: FramePlan, item: Item, job: SelectJob, index) -> bool:
    from ..data.synthetic.probes import needle_answer

    frames = _decode(path, meta, np.asarray(plan.indices), job, item.uid, index)
    answer = needle_answer(list(frames), build_prompt(item, plan))
    return bool(score_item(item, answer, "visual")["correct"])


def run(job: SelectJob) -> dict | None:
    """Select for this process's share of the videos; if every video is journaled, write the outputs.
    Returns the summary when this process wrote them, else None (another process will)."""
    ident, description = job.identity()
    units = videos_of(job.items)
    rank, world = job.shard
    mine = units[rank::world]
    keys = {u: _video_key(ident, job, u) for u in units}
    journal = _journal(job, ident)
    todo = [u for u in mine if keys[u] not in journal]
    label = f"select [{rank + 1}/{world}]" if world > 1 else "select"
    with tqdm(total=len(mine), unit="video", desc=label, disable=not job.progress, file=sys.stderr) as bar:
        bar.update(len(mine) - len(todo))
        for unit in todo:
            journal.add(keys[unit], select_video(job, unit), video=unit.video_key)
            bar.update(1)
    this_run = {"videos_selected": len(todo), "videos_reused": len(mine) - len(todo), "shard": f"{rank}/{world}"}
    folder = job.out / JOURNAL_DIR
    with FileLock(str(folder / ".merge.lock")):
        journal = _journal(job, ident)
        if any(keys[u] not in journal for u in units):
            return None
        digest = request_key(ident, [keys[u] for u in units], job.recall)
        marker = folder / "merged.json"
        names = FILES(job)
        written_digest, written = _marker(marker)
        changed = [] if written_digest != digest else _changed_outputs(job.out, names, written)
        if written_digest == digest and not changed:
            if already_reported(job.shard, this_run):
                return None
            return {"already_written": True, "this_run": this_run}
        summary = write_outputs(job, units, {u: journal.get(keys[u]) for u in units}, description, this_run)
        atomic_write_json(marker, {"digest": digest, "files": {n: file_identity(job.out / n) for n in names}})
        if changed:
            summary["rewritten"] = changed
        return summary


def _marker(path: Path) -> tuple[str | None, dict]:
    """``(digest, {file: identity})`` of the outputs the last merge wrote (``(None, {})``: none, or a damaged
    marker: the outputs are then simply written again)."""
    if not path.is_file():
        return None, {}
    try:
        value = read_json(path)
    except DataError:
        return None, {}
    if not isinstance(value, dict):
        return None, {}
    files = value.get("files")
    return value.get("digest"), files if isinstance(files, dict) else {}


def _changed_outputs(out: Path, names: list[str], written: dict) -> list[str]:
    """The outputs that are not what the run wrote: missing, or other bytes than the identity it recorded."""
    changed = []
    for n in names:
        path = out / n
        if not path.is_file() or written.get(n) is None or file_identity(path) != written[n]:
            changed.append(n)
    return changed
