"""Labelling one video's evaluated frames with a zero-shot dual encoder, at the scale of the real datasets.

A 16-frame clip around every 1 FPS annotation repeats each frame 16 times; so here every distinct frame
of a video is decoded once (the package's frame-exact decoder, a bounded block of frames at a time)
and, for an image encoder, encoded once (the next block decoding on a worker thread while this one is
encoded: :func:`~medhorizon_tasks.core.video.ahead.ahead`): its similarities to every prompt are kept, and each evaluated
frame averages those of its clip's slots. A video encoder gets each distinct clip once. Text
embeddings are computed once per dataset (:func:`embed_texts`). The protocol's rules themselves are
:mod:`medhorizon_tasks.benchmarks.surghi.zeroshot`'s functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..benchmarks.surghi.frames import FrameRow
from ..benchmarks.surghi.prompts import LevelPrompts
from ..benchmarks.surghi.zeroshot import (
    EncoderError,
    Setting,
    argmax_label,
    as_embeddings,
    clip_plan,
    similarity,
    top_k,
    window_mean,
)
from ..core.sampling import FramePlan
from ..core.video.ahead import ahead
from ..core.video.decode import decode_plan
from ..core.video.metadata import check_time_inside
from ..core.video.prepared import video_index

__all__ = ["TextSide", "VideoStats", "embed_texts", "tied", "Labeller"]


@dataclass
class TextSide:
    """One dataset's prompts, embedded once: all its levels' texts in one array, and each level's span."""

    dataset: str
    levels: dict[str, LevelPrompts]
    embeddings: np.ndarray
    spans: dict[str, slice]


@dataclass
class VideoStats:
    distinct: int = 0        # distinct frames the video's clips use
    decoded: int = 0         # frames decoded (goal: = distinct)
    encoded_frames: int = 0  # frames an image encoder encoded (goal: = distinct)
    encoded_clips: int = 0   # clips a video encoder encoded (each distinct clip once)
    tied_phases: int = 0     # evaluated frames whose phase classes all scored the same (the label is no choice)
    tied_steps: int = 0      # the same for steps

    def add(self, other: "VideoStats") -> None:
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))


def _batches(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def embed_texts(encoder: Any, dataset: str, levels: dict[str, LevelPrompts], batch_size: int) -> TextSide:
    """Every prompt of ``dataset`` embedded once (EncoderError naming the class of a bad row)."""
    texts: list[str] = []
    names: list[str] = []
    spans: dict[str, slice] = {}
    for level, lp in levels.items():
        start = len(texts)
        for k, text in enumerate(lp.texts()):
            texts.append(text)
            names.append(f"the {level[:-1]} {lp.owner(k)!r} of {dataset} (prompt {text!r})")
        spans[level] = slice(start, len(texts))
    parts = []
    for b in _batches(len(texts), batch_size):
        parts.append(as_embeddings(encoder.encode_text(texts[b]), b.stop - b.start, "encode_text",
                                   lambda i, b=b: names[b.start + i], parts[0].shape[1] if parts else None))
    embeddings = np.concatenate(parts)
    for level, lp in levels.items():
        rows = embeddings[spans[level]]
        if len(lp.labels) > 1 and np.all(rows == rows[0]):
            raise EncoderError(f"encode_text gives every {level[:-1]} prompt of {dataset} the same embedding "
                               f"({'all zero' if not rows.any() else 'one vector'}, for {len(rows)} prompts such as "
                               f"{lp.texts()[0]!r}): every frame would tie on every {level[:-1]} class; give the "
                               "classes prompts this encoder tells apart (--prompts, --label-template)")
    return TextSide(dataset, levels, embeddings, spans)


def tied(per_class: np.ndarray) -> bool:
    """Whether every class scored the same (up to float dust): the argmax then picks the first class listed,
    which is no prediction."""
    top = float(np.max(np.abs(per_class)))
    return len(per_class) > 1 and float(np.ptp(per_class)) <= 1e-12 * max(1.0, top)


@dataclass
class Labeller:
    """Labels the evaluated frames of one video at a time (see the module doc)."""

    encoder: Any
    kind: str
    setting: Setting
    batch_size: int = 32
    max_side: int | None = None
    k: int = 5
    block_frames: int = 0  # frames decoded at once (default: 4 batches, at least two clips)
    stats: VideoStats = field(default_factory=VideoStats)

    def __post_init__(self):
        if not self.block_frames:
            self.block_frames = max(4 * self.batch_size, 2 * self.setting.frames)

    def label_video(self, path: Path, rows: list[FrameRow], text: TextSide,
                    advance: Callable[[int], None] = lambda n: None) -> tuple[list[dict], VideoStats]:
        """One result per row (``{"phases": [label, top_k], "steps": ...}``) and what it took; VideoError
        when the video cannot be read."""
        index = video_index(path, rows[0].uid)
        meta = index.meta()
        plans = []
        for r in rows:
            check_time_inside(index, float(r.timestamp_s or 0.0), "the frame's timestamp_s", path=path, uid=r.uid)
            plans.append(clip_plan(meta, min(float(r.timestamp_s or 0.0), meta.duration_s), self.setting).indices)
        distinct = sorted(set().union(*plans))
        stats = VideoStats(distinct=len(distinct))
        results: list[dict] = [{} for _ in rows]
        decode = _Decoder(path, index, meta, self.max_side, rows[0].uid, stats)
        if self.kind == "image":
            self._images(decode, distinct, plans, text, results, stats, advance, rows)
        else:
            self._clips(decode, plans, text, results, stats, advance, rows)
        self.stats.add(stats)
        return results, stats

    def _finish(self, scores: np.ndarray, text: TextSide, row: FrameRow, stats: VideoStats) -> dict:
        """A row's labels and top classes; EncoderError naming the video, frame and level when a score is
        NaN or infinite (never written, never an argmax)."""
        out = {}
        for level, lp in text.levels.items():
            per_class = lp.class_means(scores[text.spans[level]])
            if not np.all(np.isfinite(per_class)):
                bad = [lab for lab, v in zip(lp.labels, per_class) if not np.isfinite(v)]
                raise EncoderError(f"{row.dataset} video {row.video}, frame {row.frame}: the {level[:-1]} scores of "
                                   f"{', '.join(map(repr, bad[:3]))}{' ...' if len(bad) > 3 else ''} are NaN or "
                                   f"infinite ({self.setting.similarity} similarity); nothing is written")
            if tied(per_class):
                setattr(stats, f"tied_{level}", getattr(stats, f"tied_{level}") + 1)
            out[level] = [argmax_label(per_class, lp.labels), top_k(per_class, lp.labels, self.k)]
        return out

    def _score(self, emb: Any, n: int, what: str, name_of, text: TextSide) -> np.ndarray:
        x = as_embeddings(emb, n, what, name_of, text.embeddings.shape[1])
        return similarity(x, text.embeddings, self.setting)

    def _images(self, decode, distinct, plans, text, results, stats, advance, rows) -> None:
        """Each distinct frame encoded once; a row is finished as soon as its last frame is scored."""
        pos = {f: k for k, f in enumerate(distinct)}
        scores = np.empty((len(distinct), text.embeddings.shape[0]))
        order = sorted(range(len(plans)), key=lambda i: max(plans[i]))
        nxt = 0
        blocks = list(_batches(len(distinct), self.block_frames))
        # block k+1 decodes on a worker thread while block k is encoded (one block ahead: two in memory)
        for done_block in ahead(blocks, lambda block: decode(distinct[block]), depth=1):
            if done_block.error is not None:
                raise done_block.error
            block, frames = done_block.item, done_block.value
            chunk = distinct[block]
            for b in _batches(len(chunk), self.batch_size):
                emb = self.encoder.encode_images(frames[b])
                stats.encoded_frames += b.stop - b.start
                scores[block.start + b.start:block.start + b.stop] = self._score(
                    emb, b.stop - b.start, "encode_images", lambda i, b=b: decode.name(chunk[b.start + i]), text)
            del frames
            done = nxt
            while nxt < len(order) and max(plans[order[nxt]]) <= chunk[-1]:
                i = order[nxt]
                results[i] = self._finish(window_mean(scores, [pos[f] for f in plans[i]]), text, rows[i], stats)
                nxt += 1
            advance(nxt - done)

    def _clips(self, decode, plans, text, results, stats, advance, rows) -> None:
        """Each distinct clip encoded once, its frames decoded once; blocks of rows in time order."""
        order = sorted(range(len(plans)), key=lambda i: (min(plans[i]), i))
        blocks, current, frames_in = [], [], set()
        for i in order:
            if current and len(frames_in | set(plans[i])) > self.block_frames:
                blocks.append(current)
                current, frames_in = [], set()
            current.append(i)
            frames_in |= set(plans[i])
        blocks.append(current)
        # the frames each block decodes (those not kept from the blocks before), known in advance: the next
        # block's decode on a worker thread while this block's clips are encoded
        needs, held = [], set()
        for n, block in enumerate(blocks):
            frames_of = set().union(*(plans[i] for i in block))
            needs.append(sorted(frames_of - held))
            held |= frames_of
            if n + 1 < len(blocks):
                first = min(min(plans[i]) for i in blocks[n + 1])
                held = {f for f in held if f >= first}
        decoded = ahead(needs, lambda needed: decode(needed) if needed else None, depth=1)
        kept: dict[int, np.ndarray] = {}
        clip_scores: dict[tuple, np.ndarray] = {}
        for n, (block, got_frames) in enumerate(zip(blocks, decoded)):
            if got_frames.error is not None:
                raise got_frames.error
            needed = got_frames.item
            if needed:
                kept.update(zip(needed, got_frames.value))
            todo = list(dict.fromkeys(tuple(plans[i]) for i in block if tuple(plans[i]) not in clip_scores))
            for b in _batches(len(todo), self.batch_size):
                batch = np.stack([np.stack([kept[f] for f in clip]) for clip in todo[b]])
                emb = self.encoder.encode_clips(batch)
                stats.encoded_clips += b.stop - b.start
                got = self._score(emb, b.stop - b.start, "encode_clips",
                                  lambda i, b=b: f"the clip of {decode.name(todo[b.start + i][0])} ...", text)
                clip_scores.update(zip(todo[b], got))
            for i in block:
                results[i] = self._finish(clip_scores[tuple(plans[i])], text, rows[i], stats)
            advance(len(block))
            if n + 1 < len(blocks):  # frames before the next block's first are never needed again
                first = min(min(plans[i]) for i in blocks[n + 1])
                kept = {f: a for f, a in kept.items() if f >= first}


class _Decoder:
    """Frames of one video by index (each call decodes only what it is given), counted."""

    def __init__(self, path: Path, index, meta, max_side, uid: str, stats: VideoStats):
        self.path, self.index, self.meta, self.max_side, self.uid, self.stats = path, index, meta, max_side, uid, stats

    def __call__(self, indices: list[int]) -> np.ndarray:
        times = self.meta.times_of(np.asarray(indices, dtype=np.int64))
        plan = FramePlan(tuple(int(i) for i in indices), tuple(float(t) for t in times), "zeroshot")
        frames = decode_plan(self.path, plan, max_side=self.max_side, uid=self.uid, index=self.index)
        self.stats.decoded += len(indices)
        return frames

    def name(self, frame: int) -> str:
        t = float(self.meta.times_of(np.asarray([frame]))[0])
        return f"frame {frame} (at {t:.2f} s) of {self.path}"
