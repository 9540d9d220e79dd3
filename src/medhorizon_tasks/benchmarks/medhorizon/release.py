"""Reading and validating the MedHorizon release.

The release is JSON Lines, one record per VIDEO with its questions nested
under ``qa`` (see the dataset card in ``hf_dataset_card/``). This module
flattens it to one :class:`Item` per question and checks every field; all
problems are collected and reported together, each naming the uid (or the
line, when there is no usable uid) and the field.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ...core.errors import DataError
from ...core.file_identity import stat_key
from ...core.mcq import parse_answer_key, parse_options
from ...core.predictions import parse_uid
from ...core.safeio import iter_jsonl, load_hf_dataset_folder, read_json, read_parquet_rows
from ...core.settings import env_text
from .taxonomy import resolve_task

__all__ = ["Item", "load_release", "release_records", "flatten_record", "features", "items_to_dataset", "LETTERS",
           "DATA_ENV"]

LETTERS = ("A", "B", "C", "D")
DATA_ENV = "MEDHORIZON_DATA"
SUPPORT_KINDS = ("local", "proxy", "global")
_SUPPORT_ALIASES = {
    "local": "local", "exact": "local", "localized": "local", "localised": "local", "window": "local",
    "onset": "local", "direct": "local",
    "proxy": "proxy", "lesion_union": "proxy", "lesion-union": "proxy", "union": "proxy",
    "global": "global", "full": "global", "full_study": "global", "study": "global", "exam": "global",
    "procedure": "global",
}


@dataclass(frozen=True)
class Item:
    """One MedHorizon question, flattened with its video's metadata."""

    uid: str
    video_key: str
    source: str
    organ: str
    scene_type: str
    video_path: str
    num_frames: int
    fps: float
    duration_s: float
    question: str
    options: tuple[str, str, str, str]
    answer: str                 # "A".."D"
    task: str                   # task code, e.g. "PR"
    task_name: str
    family: str                 # "fine_grained" | "semantic_reasoning"
    hop: int                    # 1..3 for semantic reasoning, 0 for fine-grained
    evidence_support: str       # "local" | "proxy" | "global" | "" (not given)
    evidence_windows: tuple[tuple[int, int], ...]  # inclusive frame ranges
    # The release's own evidence images, when a record lists them (frame numbers in the data's numbering): the
    # oracle then shows exactly these ("the variable number of available evidence images", paper 8, RQ2).
    evidence_frames: tuple[int, ...] = ()

    def to_record(self) -> dict:
        d = asdict(self)
        d["options"] = list(self.options)
        d["evidence_windows"] = [list(w) for w in self.evidence_windows]
        d["evidence_frames"] = list(self.evidence_frames)
        return d

    @classmethod
    def from_record(cls, d: dict) -> "Item":
        fields = {k: d[k] for k in cls.__dataclass_fields__ if k != "evidence_frames"}
        fields["options"] = tuple(fields["options"])
        fields["evidence_windows"] = tuple(tuple(int(x) for x in w) for w in fields["evidence_windows"])
        fields["evidence_frames"] = tuple(int(x) for x in d.get("evidence_frames") or ())
        return cls(**fields)


@functools.cache
def features():
    """The ``datasets.Features`` of a flattened item (``datasets`` is imported on first use: it is slow)."""
    from datasets import Features, Sequence, Value

    return Features({
        "uid": Value("string"), "video_key": Value("string"), "source": Value("string"),
        "organ": Value("string"), "scene_type": Value("string"), "video_path": Value("string"),
        "num_frames": Value("int64"), "fps": Value("float64"), "duration_s": Value("float64"),
        "question": Value("string"), "options": Sequence(Value("string"), length=4),
        "answer": Value("string"), "task": Value("string"), "task_name": Value("string"),
        "family": Value("string"), "hop": Value("int8"), "evidence_support": Value("string"),
        "evidence_windows": Sequence(Sequence(Value("int64"), length=2)),
        "evidence_frames": Sequence(Value("int64")),
    })


def items_to_dataset(items: list[Item]):
    """The flattened items as a ``datasets.Dataset`` with the documented Features."""
    from datasets import Dataset

    return Dataset.from_list([it.to_record() for it in items], features=features())


# ------------------------------------------------------------------ parsing

def _parse_options(raw, where: str, problems: list[str]) -> tuple[str, ...] | None:
    return parse_options(raw, LETTERS, where, problems)


def _parse_answer(raw, options: tuple[str, ...], where: str, problems: list[str]) -> str | None:
    return parse_answer_key(raw, options, LETTERS, where, problems)


def _windows_from(raw, num_frames: int, fps: float, seconds: bool, where: str, field: str,
                  problems: list[str]) -> list[tuple[int, int]] | None:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append(f"{where} field '{field}': expected a list of [start, end] pairs, got {type(raw).__name__}")
        return None
    out = []
    for w in raw:
        if isinstance(w, (int, float)) and not isinstance(w, bool):  # a bare list of frame indices
            w = [w, w]
        if isinstance(w, dict):
            w = [w.get("start", w.get("start_frame")), w.get("end", w.get("end_frame"))]
        if (not isinstance(w, (list, tuple)) or len(w) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in w)):
            problems.append(f"{where} field '{field}': each window must be [start, end] numbers, got {w!r}")
            return None
        a, b = w
        if seconds:
            a, b = int(math.floor(a * fps)), int(math.ceil(b * fps))
            b = min(b, num_frames - 1)
        if a != int(a) or b != int(b):
            problems.append(f"{where} field '{field}': frame windows must be integers, got {w!r}")
            return None
        a, b = int(a), int(b)
        if a < 0 or b < a or b >= num_frames:
            problems.append(f"{where} field '{field}': window [{a}, {b}] is outside the video's frames 0..{num_frames - 1} or reversed")
            return None
        out.append((a, b))
    return out


#: Where a record may list its evidence images (frame numbers, or ``{"frame": n}`` objects).
EVIDENCE_IMAGE_KEYS = ("images", "image_frames", "frame_list", "frame_indices")


def _frames_from(raw, num_frames: int, where: str, field: str, problems: list[str]) -> tuple[int, ...] | None:
    """The release's evidence images as frame numbers (each once, in time order); None after a problem."""
    if not isinstance(raw, list):
        problems.append(f"{where} field '{field}': expected a list of frame numbers, got {type(raw).__name__}")
        return None
    out = set()
    for f in raw:
        if isinstance(f, dict):
            f = f.get("frame", f.get("frame_index", f.get("index")))
        if isinstance(f, float) and f.is_integer():
            f = int(f)
        if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f < num_frames:
            problems.append(f"{where} field '{field}': each image must be a frame number in 0..{num_frames - 1}, "
                            f"got {f!r}")
            return None
        out.add(f)
    return tuple(sorted(out))


def _parse_evidence(qa: dict, num_frames: int, fps: float, where: str, problems: list[str]):
    """Evidence metadata in the shapes a release may use: ``(support, windows, images)``; ("", (), ()) when
    absent."""
    ev = qa.get("evidence")
    support_raw = None
    windows: list[tuple[int, int]] | None = []
    if ev is not None and not isinstance(ev, dict):
        problems.append(f"{where} field 'evidence': expected an object, got {type(ev).__name__}")
        return None
    src = ev if isinstance(ev, dict) else {
        k[len("evidence_"):]: v for k, v in qa.items() if k.startswith("evidence_")}
    for key in ("support", "type", "support_type", "kind"):
        if key in src:
            support_raw = src[key]
            break
    for key, secs in (("frame_windows", False), ("windows", False), ("frames", False),
                      ("time_windows", True), ("windows_s", True)):
        if key in src:
            field = f"evidence.{key}" if isinstance(ev, dict) else f"evidence_{key}"
            windows = _windows_from(src[key], num_frames, fps, secs, where, field, problems)
            if windows is None:
                return None
            break
    images: tuple[int, ...] = ()
    for key in EVIDENCE_IMAGE_KEYS:
        if key in src and src[key] is not None:
            field = f"evidence.{key}" if isinstance(ev, dict) else f"evidence_{key}"
            images = _frames_from(src[key], num_frames, where, field, problems)
            if images is None:
                return None
            break
    support = ""
    if support_raw is not None:
        if not isinstance(support_raw, str) or support_raw.strip().lower() not in _SUPPORT_ALIASES:
            problems.append(f"{where} field 'evidence.support': unknown support kind {support_raw!r} "
                            f"(expected one of {', '.join(SUPPORT_KINDS)})")
            return None
        support = _SUPPORT_ALIASES[support_raw.strip().lower()]
    elif windows or images:
        support = "local"
    return support, tuple(sorted(windows)), images


def _str_field(record: dict, name: str, default: str = "") -> str:
    v = record.get(name, default)
    return v.strip() if isinstance(v, str) else default


def flatten_record(record: object, line: int, problems: list[str]) -> list[Item]:
    """Items of one video record; problems are appended (never raised) so all are reported at once."""
    where_line = f"line {line}:"
    if not isinstance(record, dict):
        problems.append(f"{where_line} expected a JSON object (one video with its 'qa' list), got {type(record).__name__}")
        return []
    key = record.get("key")
    video = f"{where_line} video {key!r}"
    start = len(problems)
    video_path = record.get("video_path")
    if not isinstance(video_path, str) or not video_path.strip():
        problems.append(f"{video} field 'video_path': missing or not a string")
    num_frames = record.get("num_frames")
    if isinstance(num_frames, float) and num_frames.is_integer():
        num_frames = int(num_frames)
    if isinstance(num_frames, bool) or not isinstance(num_frames, int) or num_frames <= 0:
        problems.append(f"{video} field 'num_frames': must be a positive integer, got {num_frames!r}")
    fps = record.get("fps")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0 or fps > 1000:
        problems.append(f"{video} field 'fps': must be a positive frame rate, got {fps!r}")
    duration = record.get("duration_seconds", record.get("duration"))
    if len(problems) == start:
        expected = num_frames / fps
        if duration is None:
            duration = expected
        elif (isinstance(duration, bool) or not isinstance(duration, (int, float)) or not math.isfinite(duration)
              or duration <= 0):
            problems.append(f"{video} field 'duration_seconds': must be a positive number, got {duration!r}")
        elif abs(duration - expected) > max(5.0, 0.1 * expected):
            problems.append(f"{video} field 'duration_seconds': {duration} disagrees with num_frames/fps = "
                            f"{num_frames}/{fps} = {expected:.1f}")
    source = record.get("dataset", record.get("source"))
    if not isinstance(source, str) or not source.strip():
        problems.append(f"{video} field 'dataset': missing source dataset name")
    qa_list = record.get("qa")
    if not isinstance(qa_list, list) or not qa_list:
        problems.append(f"{video} field 'qa': expected a non-empty list of questions")
        return []
    if len(problems) > start:
        return []

    items = []
    for j, qa in enumerate(qa_list):
        if not isinstance(qa, dict):
            problems.append(f"{video} field 'qa[{j}]': expected an object, got {type(qa).__name__}")
            continue
        uid = parse_uid(qa.get("uid"))
        if uid is None:
            problems.append(f"{video} field 'qa[{j}].uid': missing or not an integer/string, got {qa.get('uid')!r}")
            continue
        where = f"item {uid}:"
        n_before = len(problems)
        question = qa.get("question")
        if not isinstance(question, str) or not question.strip():
            problems.append(f"{where} field 'question': missing or empty")
        if "options" not in qa:
            problems.append(f"{where} field 'options': missing")
            options = None
        else:
            options = _parse_options(qa["options"], where, problems)
        answer = None
        if options is not None:
            if "answer" not in qa:
                problems.append(f"{where} field 'answer': missing")
            else:
                answer = _parse_answer(qa["answer"], options, where, problems)
        task = resolve_task(qa.get("task_id")) or resolve_task(qa.get("task_name")) or resolve_task(qa.get("task"))
        if task is None:
            given = qa.get("task_id", qa.get("task_name", qa.get("task")))
            problems.append(f"{where} field 'task_id': unknown task {given!r} (expected one of PR, SD, RL, BPQ, "
                            "LLS, Site, Hist, Size, IR, WR, RSR, CPR, LA, or their names)")
        evidence = _parse_evidence(qa, num_frames, float(fps), where, problems)
        if len(problems) > n_before:
            continue
        support, windows, images = evidence
        items.append(Item(
            uid=uid, video_key=str(key) if key is not None else video_path, source=source.strip(),
            organ=_str_field(record, "organ"), scene_type=_str_field(record, "scene_type"),
            video_path=video_path.strip(), num_frames=num_frames, fps=float(fps), duration_s=float(duration),
            question=question.strip(), options=options, answer=answer, task=task.code, task_name=task.name,
            family=task.family, hop=task.hop or 0, evidence_support=support, evidence_windows=windows,
            evidence_frames=images,
        ))
    return items


# ------------------------------------------------------------------ loading

def release_records(path: Path) -> list[tuple[int, object]]:
    """``(line, record)`` of every video record, as written, from a JSONL/JSON file or a folder (a saved
    Hugging Face dataset, or the folder's JSONL / parquet) -- what :func:`load_release` flattens.

    Every file goes through :mod:`...safeio`, so any bytes give records or one DataError naming the file.
    """
    if path.is_dir():
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            return list(enumerate(load_hf_dataset_folder(path, split="test"), 1))
        candidates = [p for p in sorted(path.glob("*.jsonl")) + sorted(path.glob("data/*.jsonl")) if p.is_file()]
        preferred = [p for p in candidates if "test" in p.name]
        if preferred or candidates:
            return list(iter_jsonl((preferred or candidates)[0]))
        parquet = [p for p in sorted(path.glob("*.parquet")) + sorted(path.glob("data/*.parquet")) if p.is_file()]
        if parquet:
            rows = []
            for p in parquet:
                rows.extend(read_parquet_rows(p))
            return list(enumerate(rows, 1))
        raise DataError(f"{path} is a folder without a release file (*.jsonl, *.parquet or a saved dataset)")
    if path.suffix == ".json":
        value = read_json(path)
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list):
            raise DataError("expected a JSON list of video records", source=str(path))
        return list(enumerate(value, 1))
    return list(iter_jsonl(path))


def load_release(path: str | os.PathLike | None = None) -> list[Item]:
    """All questions of a MedHorizon release, flattened and validated.

    ``path``: the release JSONL (``mlvbench_test.jsonl``), a JSON list, or a
    local Hugging Face dataset folder; default ``$MEDHORIZON_DATA``.
    """
    if path is None:
        path = env_text(DATA_ENV)
        if not path:
            raise DataError(f"no MedHorizon data given: pass a path or set ${DATA_ENV}")
    path = Path(path).expanduser()
    if not path.exists():
        raise DataError(f"file not found: {path}")
    if path.is_file():
        # one process often loads the same file again (score then compare, a leaderboard, the demo);
        # Items are frozen, so a copy of the list is all a caller can change. Remembered under the file's
        # stat key (inode and ctime included): a rewrite that keeps size and mtime is read again.
        return list(_load_file(str(path.resolve()), stat_key(path)))
    return _load(path)


#: What a video record says about its video: records sharing a key must agree on all of it.
_VIDEO_FIELDS = {"video_path": "video_path", "source": "dataset", "num_frames": "num_frames", "fps": "fps",
                 "duration_s": "duration_seconds", "organ": "organ", "scene_type": "scene_type"}


def _one_video_a_key(first: Item, line: int, videos: dict[str, tuple[int, Item]], problems: list[str]) -> None:
    """A key names one video: questions are regrouped by it (a release build, a republished folder), so two
    different videos under one key would put one video's questions on the other."""
    earlier = videos.setdefault(first.video_key, (line, first))
    if earlier[1] is first:
        return
    other_line, other = earlier
    differ = [f"{shown} {getattr(first, f)!r} vs {getattr(other, f)!r}" for f, shown in _VIDEO_FIELDS.items()
              if getattr(first, f) != getattr(other, f)]
    if differ:
        problems.append(f"line {line}: video {first.video_key!r} field 'key': line {other_line} already gives this key "
                        f"to another video ({'; '.join(differ)}): every video needs a key of its own")


@functools.lru_cache(maxsize=8)
def _load_file(path: str, stat: tuple) -> tuple[Item, ...]:
    return tuple(_load(Path(path)))


def _load(path: Path) -> list[Item]:
    problems: list[str] = []
    items: list[Item] = []
    videos: dict[str, tuple[int, Item]] = {}
    for line, record in release_records(path):
        flat = flatten_record(record, line, problems)
        if flat:
            _one_video_a_key(flat[0], line, videos, problems)
        items.extend(flat)
    seen: dict[str, int] = {}
    for it in items:
        seen[it.uid] = seen.get(it.uid, 0) + 1
    for uid, count in seen.items():
        if count > 1:
            problems.append(f"item {uid}: field 'uid' is duplicated ({count} questions share it)")
    if problems:
        raise DataError(problems, source=str(path))
    if not items:
        raise DataError("the release contains no questions", source=str(path))
    return items
