"""A synthetic Sureon-style sample: short clips whose answers are drawn as visual codes.

One 24-second video (128x96, 4 fps) per item; the clip is [1, 23] s, so the
protocol's 8 frames (uniform over the clip's 89 frames) are ~3.1 s apart and
every 4-second code window is seen. The codes are drawn into the tissue scene
(:func:`scene_code`), where the evidence of a real surgical video is, so the
blurring pass of the visual mode (text and faces) leaves them readable.

- MCQ items (the eight MCQ categories, 3 each, seven options): one window
  shows ``(tag, answer_index)``. The visual code carries two letter bits, so
  the synthetic answers are among A-D (the options still run to G; the real
  benchmark's answers are not restricted). The question ends with
  ``[probe #tag]``.
- TO items (3) and SM items (2): three windows show ``(tag, event_index)`` in
  the true order of the events; the question ends with
  ``[probe #tag events]`` and the needle probe lists the events in the order it
  sees their codes.

Blind, the needle probe sees no frames and refuses: the multimodal gain on this
sample is the whole of the visual score.

``manifest.json`` lists the files the builder wrote; a rebuild (another seed)
removes or replaces only those, keeps whatever lies beside them, and refuses,
naming it, when something else sits inside ``videos/`` or where the sample
writes (see :func:`~medhorizon_tasks.data.synthetic.folders.build_folder`).
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

SAMPLE_VERSION = 2  # 2: the codes drawn into the scene (scene_code), so that the blurring pass keeps them
GENERATOR = "medhorizon_tasks.data.synthetic_sureon"
DATA_NAME, MANIFEST_NAME = "sureon_synthetic.jsonl", "manifest.json"
FPS, WIDTH, HEIGHT, SECONDS = 4.0, 128, 96, 24
CLIP = (1.0, 23.0)
_SOFT_EDGE, _BRIGHTER, _DARKER = 1 / 12, 100.0, 0.2  # scene_code: blur sigma (x frame height), cell shading
MCQ_CATEGORIES = ("AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F")
_STEPS = ["Retraction", "Blunt dissection", "Clipping", "Cutting", "Coagulation", "Suturing", "Irrigation",
          "Suction", "Stapling", "Specimen extraction", "Knot tying", "Needle passing"]


@dataclass(frozen=True)
class SureonSample:
    root: Path
    data_path: Path
    video_root: Path


def plan_sample(seed: int = 0) -> list[dict]:
    """The items (and, in ``_windows``/``_codes``, what each video shows); a pure function of ``seed``."""
    rng = np.random.default_rng([seed, SAMPLE_VERSION])
    items = []
    k = 0
    for cat in MCQ_CATEGORIES:
        for _ in range(3):
            opts = [str(x) for x in rng.choice(_STEPS, size=7, replace=False)]
            ans = int(rng.integers(0, 4))
            start = float(rng.integers(4, 17))
            items.append({"uid": f"syn-{cat.lower()}-{k}", "category": cat,
                          "question": f"Which action is shown in the marked moment of this clip? [probe #{k}]",
                          "video_path": f"clips/clip{k:02d}.mp4", "start_s": CLIP[0], "end_s": CLIP[1],
                          "options": opts, "answer": "ABCDEFG"[ans],
                          "_windows": [[start, start + 4]], "_codes": [[k, ans]]})
            k += 1
    for cat, n in (("TO", 3), ("SM", 2)):
        for _ in range(n):
            events = [str(x) for x in rng.choice(_STEPS, size=3, replace=False)]
            order = [int(i) for i in rng.permutation(3)]  # event indices in true order
            windows = [[3.0, 7.0], [10.0, 14.0], [17.0, 21.0]]
            rec = {"uid": f"syn-{cat.lower()}-{k}", "category": cat,
                   "question": f"In what order do the marked actions happen in this clip? [probe #{k} events]",
                   "video_path": f"clips/clip{k:02d}.mp4", "start_s": CLIP[0], "end_s": CLIP[1],
                   "_windows": windows, "_codes": [[k, i] for i in order]}
            if cat == "TO":
                rec.update(events=events, answer=[events[i] for i in order])
            else:
                rec.update(events_shown=events, reference="; ".join(events[i] for i in order))
            items.append(rec)
            k += 1
    return items


def scene_code(tag: int, idx: int, tissue: np.ndarray) -> np.ndarray:
    """The code ``(tag, idx)`` drawn into the scene: the code's cells as soft-edged bright and dark patches of
    the tissue ``tissue`` (an RGB frame), not a sharp black-and-white overlay.

    Read by :func:`~medhorizon_tasks.data.synthetic.visual_code.decode_code` like the plain code (each cell's
    centre stays clearly bright or dark), but no longer looks like printed text or a face to the blurring
    pass's detectors (:mod:`medhorizon_tasks.core.video.redact`), which would otherwise blur the evidence away
    as an overlay; a test runs the real pass over every planned frame of the sample.
    """
    from scipy.ndimage import gaussian_filter

    h, w = tissue.shape[:2]
    cells = encode_code(tag, idx, h, w)[..., 0].astype(np.float32) / 255.0
    cells = gaussian_filter(cells, _SOFT_EDGE * h, mode="nearest")[..., None]
    t = tissue.astype(np.float32)
    bright, dark = np.minimum(t + _BRIGHTER, 255.0), t * _DARKER
    return np.clip(dark + cells * (bright - dark) + 0.5, 0, 255).astype(np.uint8)


def _render(rec: dict, seed: int):
    bg = BackgroundGenerator(HEIGHT, WIDTH, seed=seed)
    n = int(FPS * SECONDS)
    codes = {}
    for (a, b), (tag, idx) in zip(rec["_windows"], rec["_codes"]):
        for i in range(int(a * FPS), int(b * FPS)):
            codes[i] = (tag, idx)
    for i in range(n):
        yield scene_code(*codes[i], bg(i / FPS)) if i in codes else bg(i / FPS)


def _public(rec: dict) -> dict:
    out = {k: v for k, v in rec.items() if not k.startswith("_") and k != "events_shown"}
    if rec["category"] == "SM":  # the needle needs the event labels; a real SM item has none
        out["question"] = rec["question"].replace(" [probe", f" (actions: {'; '.join(rec['events_shown'])}) [probe")
    return out


def _legacy_files(manifest: dict) -> list[str] | None:
    """Manifests from before the "files" list: one clip per item, named by its index."""
    items = manifest.get("items")
    if set(manifest) == {"version", "seed", "items"} and isinstance(items, int) and not isinstance(items, bool):
        return [DATA_NAME, *(f"videos/clips/clip{k:02d}.mp4" for k in range(items))]
    return None


def _owned_files(root: Path) -> set[str] | None:
    """The files (relative POSIX paths) that this builder wrote in ``root``, from its manifest."""
    return manifest_files(root, GENERATOR, _legacy_files)


def _is_valid(root: Path, seed: int) -> bool:
    return sample_is_valid(root, seed, SAMPLE_VERSION, _owned_files)


def _write(tmp: Path, seed: int) -> None:
    records = plan_sample(seed)
    files = []
    for k, rec in enumerate(records):
        rel = f"videos/{rec['video_path']}"
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_video(path, _render(rec, seed * 1000 + k), FPS, WIDTH, HEIGHT)
        files.append(rel)
    (tmp / DATA_NAME).write_text("".join(json.dumps(_public(r)) + "\n" for r in records))
    files += [DATA_NAME, MANIFEST_NAME]
    # written last: only a complete build has a manifest
    (tmp / MANIFEST_NAME).write_text(json.dumps({"generator": GENERATOR, "version": SAMPLE_VERSION, "seed": seed,
                                                 "items": len(records), "files": files}))


def build_sureon_sample(out_dir: str | os.PathLike | None = None, *, seed: int = 0) -> SureonSample:
    """Write the sample (cached; safe when several processes build it at once).

    A rebuild removes or replaces only the files the previous sample's
    manifest lists and keeps what lies beside them; something else inside
    ``videos/``, or a folder that is neither a sample nor empty, raises
    :class:`~medhorizon_tasks.core.errors.DataError` naming it, touching nothing.
    """
    root = Path(out_dir) if out_dir else default_synthetic_dir() / f"sureon_v{SAMPLE_VERSION}"
    build_folder(root, write=lambda tmp: _write(tmp, seed), valid=lambda p: _is_valid(p, seed),
                 owned=_owned_files, what="synthetic Sureon sample")
    return SureonSample(root, root / DATA_NAME, root / "videos")
