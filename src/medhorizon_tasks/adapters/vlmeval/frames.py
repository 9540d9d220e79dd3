"""The frames a VLMEvalKit model is given, as files, and what became of each item's video.

VLMEvalKit hands a model image *files* (``{'type': 'image', 'value': path}``;
PIL images are rejected). The planned frames are therefore written once as
lossless PNG -- a model reads back exactly the pixels that lmms-eval hands its
models as PIL images -- into a :class:`FrameStore`:

    <root>/<key[:2]>/<key>/frame-00000.png ...  and  frames.json (written last)

``key`` is :meth:`medhorizon_tasks.core.video.frame_cache.FrameCache.key`: the video file's
identity (:func:`medhorizon_tasks.core.file_identity.file_identity`, a digest of all of its
bytes), the plan's frame indices, its redaction pass (Sureon's blurring: blurred and raw frames
never share a folder) and the frame size. Everything that decides which pixels a model
sees is in the key -- the frame setting only through the plan it produces, so
two settings that plan the same frames (a 64-frame cap on a one-minute video and
``frames=64``) share one folder, and a video file whose bytes changed anywhere (a
re-download that repaired only its middle) gets new folders, in any work dir.
A folder is filled under a file lock by the first process that needs it and
is complete once ``frames.json`` exists; everyone else (other items of the same
video, other models, other ranks, later runs) reads the files: the same
(video, plan) is never decoded twice. Decoding goes through the benchmark's own
``decode_frames``, so MedHorizon's frames also come from, and go to, the
library's frame cache when ``$MEDHORIZON_FRAME_CACHE`` is set.

Root: ``$MEDHORIZON_VLMEVAL_FRAMES``, else ``<LMUData>/medhorizon_tasks/frames``
(beside VLMEvalKit's own frame JPEGs). PNG is ~3x the size of VLMEvalKit's
JPEGs: the folder may be deleted at any time, it is rebuilt on demand.

Video outcomes travel with the predictions. A video that cannot be used
(missing, unreadable, not matching the data) must score the item as a video
error in exactly the runs whose model did not get its frames -- also when
``evaluate`` runs in another process (rank 0 under torchrun, or a later
``--mode eval``). So when a prompt is built, the item's outcome (the error
text, or ``null`` when the frames were given) is appended to an
:class:`OutcomeLog` beside the model's prediction file
(``<model>_<dataset>_video_outcomes.jsonl``), and ``evaluate`` reads it back.
It is never keyed by the video alone: a video repaired after a run must not
turn that run's frameless answers into answers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...core.safeio import append_jsonl, atomic_write_json
from ...core.sampling import FramePlan
from ...core.settings import env_text
from ...core.video.frame_cache import FrameCache

__all__ = ["FRAMES_ENV", "FrameStore", "OutcomeLog", "outcome_log_path"]

FRAMES_ENV = "MEDHORIZON_VLMEVAL_FRAMES"
MANIFEST = "frames.json"
PNG_LEVEL = 1  # zlib effort: lossless at every level; 1 writes fastest


class FrameStore:
    """Planned frames as PNG files, one folder per (video content, plan, frame size)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self._keys = FrameCache(self.root)

    @classmethod
    def from_env(cls, default_root: str | os.PathLike) -> "FrameStore":
        return cls(env_text(FRAMES_ENV) or default_root)

    def folder(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | None) -> Path:
        key = self._keys.key(video_path, plan, max_side)
        return self.root / key[:2] / key

    def frame_files(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | None,
                    decode: Callable[[], np.ndarray]) -> list[str]:
        """The plan's frames as PNG paths, in plan order; ``decode()`` (the benchmark's ``decode_frames``) runs
        only when no process wrote them before. A VideoError from it propagates (nothing is stored)."""
        from filelock import FileLock

        folder = self.folder(video_path, plan, max_side)
        files = _complete(folder, plan)
        if files is not None:
            return files
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder) + ".lock"):
            files = _complete(folder, plan)
            if files is None:
                files = _write(folder, plan, max_side, video_path, decode())
        return files


def _complete(folder: Path, plan: FramePlan) -> list[str] | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict):
        return None  # damaged: the plan is decoded again
    names = manifest.get("files")
    if (manifest.get("plan_key") != plan.key or not isinstance(names, list) or len(names) != len(plan)
            or not all(isinstance(n, str) and n and "/" not in n and "\\" not in n and n not in (".", "..")
                       for n in names)):
        return None
    files = [str(folder / n) for n in names]
    return files if all(os.path.isfile(f) for f in files) else None


def _write(folder: Path, plan: FramePlan, max_side: int | None, video_path, frames: np.ndarray) -> list[str]:
    from PIL import Image

    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[0] != len(plan) or frames.shape[3] != 3:
        raise ValueError(f"expected ({len(plan)}, H, W, 3) uint8 frames, got {frames.shape} {frames.dtype}")
    names = [f"frame-{i:05d}.png" for i in range(len(plan))]
    for name, arr in zip(names, frames):
        # renamed into place, not synced one by one: the manifest, synced and written last, vouches for them
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        Image.fromarray(np.ascontiguousarray(arr)).save(tmp, format="PNG", compress_level=PNG_LEVEL)
        os.replace(tmp, folder / name)
    atomic_write_json(folder / MANIFEST, {"video": os.path.abspath(video_path), "plan_key": plan.key,
                                          "policy": plan.policy, "redaction": plan.redaction,
                                          "indices": list(plan.indices),
                                          "timestamps": list(plan.timestamps), "max_side": max_side,
                                          "files": names})
    return [str(folder / n) for n in names]


def outcome_log_path(prediction_file: str | os.PathLike) -> Path:
    """``<model>_<dataset>_video_outcomes.jsonl`` beside ``<model>_<dataset>.<ext>``."""
    p = Path(prediction_file)
    return p.with_name(p.stem + "_video_outcomes.jsonl")


class OutcomeLog:
    """``uid -> video error (None: the model was given the frames)`` for one prediction file.

    Lines are appended (:func:`~medhorizon_tasks.core.safeio.append_jsonl`: one write on
    an ``O_APPEND`` descriptor, synced), so ranks writing at once do not
    interleave; the last line of a uid wins (a resumed run that builds a prompt
    again also asks the model again)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def record(self, uid: str, error: str | None, n_frames: int = 0) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_jsonl(self.path, {"uid": str(uid), "error": error, "frames": n_frames})

    def read(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return out
        for line in text.split("\n"):  # not splitlines(): U+2028 inside an error text is not a line end
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash; its prompt is built again on resume
            if isinstance(rec, dict) and isinstance(rec.get("uid"), str):
                error = rec.get("error")
                out[rec["uid"]] = error if isinstance(error, str) else None
        return out


