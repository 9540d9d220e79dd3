"""SurgHiBench zero-shot: how a dual encoder labels one evaluated frame (the paper's protocol, framework-free).

What the paper says (seed ``surghibench.txt``):

* Sec. 3.3, CLIP ViT-B/16: "Since CLIP has no temporal modeling, each frame is encoded independently
  and similarities are averaged over the temporal window."
* Sec. 3.3 / 4.2, SurgCLIP*(beta) and HyperSurg: a TimeSformer "encodes T=16 uniformly sampled frames";
  "We follow their [SurgLaVi's] zero-shot evaluation protocol and test splits": 16 frames at the
  annotations' sample rate (1 FPS), centred on the evaluated frame
  (:class:`~medhorizon_tasks.core.sampling.CentredClip`).
* Supplement A.2: "All zero-shot evaluations use text descriptions as prompts, with no prompt
  engineering, ensembling, or templates"; "The model computes cosine similarity (or Lorentz distance
  for HyperSurg) between the video embedding and each text prompt to produce per-class scores."
* Sec. 4.1-4.3, Eq. 3-5: the hyperboloid of curvature -1/c, d_L(x, y) = acosh(-c <x, y>_L) / sqrt(c),
  the exponential map at the origin exp_o(v) = sinh(sqrt(c) |v|) / (sqrt(c) |v|) v (space components),
  similarity = -d_L (the learned temperature does not change an argmax).

The rules, one function each:

* :func:`clip_plan`: the T frames of one evaluated frame (default T = 16 at 1 FPS);
* image encoders: every frame of the clip encoded alone, one similarity per frame, averaged over the
  clip's T slots (:func:`window_mean`); video encoders: one embedding per clip;
* :func:`similarity`: ``cosine`` (both sides L2-normalised) or ``lorentz`` (negative Lorentz distance
  after the exponential map, as MERU / HyperSurg do; an encoder whose embeddings already lie on the
  hyperboloid says so);
* several prompts of one class: their similarities are averaged
  (:meth:`~.prompts.LevelPrompts.class_means`);
* phase and step are predicted independently: the argmax over the dataset's classes of each level
  (:func:`argmax_label`; equal scores go to the class listed first in the hierarchy).

A model comes in through :class:`ZeroShotEncoder` (the plug-in interface; loaders for open_clip,
transformers and a user's class live in ``adapters/encoders``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from ...core.errors import MedHorizonError
from ...core.sampling import CentredClip, FramePlan, VideoMeta, plan_frames

__all__ = ["DEFAULT_FRAMES", "DEFAULT_FPS", "DEFAULT_CURVATURE", "SIMILARITIES", "KINDS", "EncoderError",
           "ZeroShotEncoder", "Setting", "encoder_kind", "clip_plan", "as_embeddings", "cosine_scores",
           "exp_map0", "lorentz_distance", "lorentz_scores", "similarity", "window_mean", "argmax_label",
           "top_k"]

DEFAULT_FRAMES = 16         # T: "T=16 uniformly sampled frames" (Sec. 4.2), SurgLaVi's centred clip
DEFAULT_FPS = 1.0           # the annotations' rate (SurgLaVi frame lists at sample rate 1)
# c when the encoder names none: HyperSurg's learned value, "At convergence: tau=0.035, c=0.815" (supplement A.4,
# "Learnable Parameters"); the paper's only Lorentz model, so a Lorentz encoder that names no c is read as it
DEFAULT_CURVATURE = 0.815
SIMILARITIES = ("cosine", "lorentz")
KINDS = ("image", "video")


class EncoderError(MedHorizonError):
    """An encoder that breaks the interface (wrong shape, NaN, a missing method): one message naming what."""


@runtime_checkable
class ZeroShotEncoder(Protocol):
    """What ``surghi zeroshot`` needs from a model.

    * ``kind``: ``"image"`` (frames encoded one by one, similarities averaged over the clip) or
      ``"video"`` (one embedding per clip of T frames);
    * ``encode_text(texts: list[str]) -> (len(texts), D)``;
    * image encoders: ``encode_images(frames) -> (N, D)``, ``frames`` an ``(N, H, W, 3)`` uint8 RGB array;
    * video encoders: ``encode_clips(clips) -> (N, D)``, ``clips`` an ``(N, T, H, W, 3)`` uint8 RGB array,
      frames in time order, the evaluated frame at position ``T // 2`` away from the video's ends;
    * optional: ``similarity`` (``"cosine"``, the default, or ``"lorentz"``), ``curvature`` (c, for
      lorentz), ``embeddings_on_hyperboloid`` (lorentz: ``True`` when the embeddings are already the space
      components of points on the hyperboloid; default ``False``: tangent vectors at the origin, mapped
      here), ``name`` (shown in reports).

    Embeddings may be NumPy arrays or torch tensors (any float dtype, any device).
    """

    kind: str

    def encode_text(self, texts: list[str]) -> Any: ...


@dataclass(frozen=True)
class Setting:
    """Everything about the protocol that changes a prediction (part of a run's identity)."""

    frames: int = DEFAULT_FRAMES
    fps: float = DEFAULT_FPS
    similarity: str = "cosine"
    curvature: float = DEFAULT_CURVATURE
    on_hyperboloid: bool = False

    def __post_init__(self):
        if isinstance(self.frames, bool) or not isinstance(self.frames, int) or self.frames < 1:
            raise MedHorizonError(f"--frames must be a whole number >= 1, got {self.frames!r}")
        if not (math.isfinite(self.fps) and self.fps > 0):
            raise MedHorizonError(f"--fps must be > 0, got {self.fps!r}")
        if self.similarity not in SIMILARITIES:
            raise MedHorizonError(f"similarity must be one of {', '.join(SIMILARITIES)}, got {self.similarity!r}")
        if not (math.isfinite(self.curvature) and self.curvature > 0):
            raise MedHorizonError(f"curvature must be > 0, got {self.curvature!r}")

    def to_json(self) -> dict:
        return {"frames": self.frames, "fps": self.fps, "similarity": self.similarity,
                "curvature": self.curvature if self.similarity == "lorentz" else None,
                "embeddings_on_hyperboloid": self.on_hyperboloid if self.similarity == "lorentz" else None}


def encoder_kind(encoder: Any) -> str:
    """The encoder's kind, once its interface is checked (EncoderError naming what is missing)."""
    kind = getattr(encoder, "kind", None)
    if kind not in KINDS:
        raise EncoderError(f"encoder {type(encoder).__name__}: kind must be 'image' or 'video', got {kind!r}")
    needed = ("encode_text", "encode_images" if kind == "image" else "encode_clips")
    missing = [m for m in needed if not callable(getattr(encoder, m, None))]
    if missing:
        raise EncoderError(f"encoder {type(encoder).__name__} ({kind}): no method {', '.join(missing)} "
                           "(see ZeroShotEncoder in medhorizon_tasks.benchmarks.surghi.zeroshot)")
    sim = getattr(encoder, "similarity", "cosine")
    if sim not in SIMILARITIES:
        raise EncoderError(f"encoder {type(encoder).__name__}: similarity must be one of "
                           f"{', '.join(SIMILARITIES)}, got {sim!r}")
    return kind


def clip_plan(meta: VideoMeta, timestamp_s: float, setting: Setting) -> FramePlan:
    """The ``setting.frames`` frames an encoder sees for the frame at ``timestamp_s`` (CentredClip)."""
    return plan_frames(meta, CentredClip(float(timestamp_s), setting.frames, setting.fps))


# ------------------------------------------------------------------ embeddings

def as_embeddings(value: Any, n: int, what: str, name_of: Callable[[int], str], dim: int | None = None) -> np.ndarray:
    """An encoder's output as an ``(n, D)`` float64 array, or EncoderError naming the call and the first bad row.

    ``what``: the call (``"encode_images"``...); ``name_of(i)``: the input of row ``i`` in words (a frame
    with its video and time, a class with its dataset); ``dim``: the D the other side has.
    """
    if hasattr(value, "detach"):  # a torch tensor, on any device, in any dtype
        value = value.detach().float().cpu().numpy()
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EncoderError(f"{what} returned {type(value).__name__}, not an array of numbers ({exc}) "
                           f"for {name_of(0)}") from None
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] == 0:
        raise EncoderError(f"{what} returned shape {tuple(arr.shape)} for {n} input(s) ({name_of(0)} ...): "
                           f"expected ({n}, D)")
    if dim is not None and arr.shape[1] != dim:
        raise EncoderError(f"{what} returned {arr.shape[1]}-dimensional embeddings for {name_of(0)} ...; the "
                           f"text embeddings have {dim}: the two towers must share one space")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise EncoderError(f"{what} returned NaN or infinity for {name_of(i)}"
                           + (f" (and {int(bad.sum()) - 1} more)" if bad.sum() > 1 else ""))
    return arr


# ------------------------------------------------------------------ similarity

def cosine_scores(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(N, M)`` cosine similarities of rows of ``x`` and ``t`` (a zero vector has similarity 0)."""
    def unit(a):
        norm = np.linalg.norm(a, axis=1, keepdims=True)
        return a / np.where(norm > 0, norm, 1.0)
    return unit(x) @ unit(t).T


def exp_map0(v: np.ndarray, c: float) -> np.ndarray:
    """Space components of exp_o(v) on the hyperboloid of curvature -1/c (Eq. 4): sinh(sqrt(c)|v|) /
    (sqrt(c)|v|) * v; the time component is sqrt(1/c + |x|^2)."""
    r = math.sqrt(c) * np.linalg.norm(v, axis=1, keepdims=True)
    scale = np.where(r > 0, np.sinh(r) / np.where(r > 0, r, 1.0), 1.0)
    return scale * v


def _polar(v: np.ndarray, c: float, *, on_hyperboloid: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's point as (geodesic distance from the origin times sqrt(c), unit direction): for a tangent
    vector v, sqrt(c) |v| (the exponential map keeps its length); for space components x of a point on the
    hyperboloid, asinh(sqrt(c) |x|). A zero row gets any unit direction (its distance is 0, so none counts).
    The norm is taken on the row scaled by its largest entry, so no square overflows."""
    peak = np.max(np.abs(v), axis=1, keepdims=True)
    scale = np.where(peak > 0, peak, 1.0)
    with np.errstate(over="ignore"):  # a norm beyond the float range is infinite: the score guard names it
        norm = peak * np.linalg.norm(v / scale, axis=1, keepdims=True)
    unit = np.where(norm > 0, v / np.where(norm > 0, norm, 1.0), 0.0)
    unit[norm[:, 0] == 0, 0] = 1.0
    r = math.sqrt(c) * norm[:, 0]
    return (np.arcsinh(r) if on_hyperboloid else r), unit


def _half_squared_gaps(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(|u_i - w_j|^2 / 2, |u_i + w_j|^2 / 2)`` of unit rows: 1 - cos t and 1 + cos t without the
    cancellation of 1 - u.w (two directions 1e-8 apart still differ), in blocks of rows of bounded size."""
    minus, plus = np.empty((len(u), len(w))), np.empty((len(u), len(w)))
    step = max(1, (1 << 22) // max(1, w.size))
    for i in range(0, len(u), step):
        block = u[i:i + step, None, :]
        minus[i:i + step] = np.sum((block - w[None]) ** 2, axis=2) / 2
        plus[i:i + step] = np.sum((block + w[None]) ** 2, axis=2) / 2
    return minus, plus


def _distance_polar(a: np.ndarray, u: np.ndarray, b: np.ndarray, w: np.ndarray, c: float) -> np.ndarray:
    """``(N, M)`` distances between points at (scaled) radii ``a``, ``b`` in unit directions ``u``, ``w``, by
    the hyperbolic law of cosines, in log space: cosh d = cosh a cosh b - sinh a sinh b cos t
    = [e^(a+b) (1 - cos t) + (e^(a-b) + e^(b-a)) (1 + cos t) + e^-(a+b) (1 - cos t)] / 4, with
    1 - cos t = |u - w|^2 / 2 and 1 + cos t = |u + w|^2 / 2 (no cancellation near t = 0 or pi), so radii of
    thousands (embeddings of norm in the hundreds, where sinh overflows) give exact, finite distances."""
    a, b = a[:, None], b[None, :]
    minus, plus = _half_squared_gaps(u, w)
    with np.errstate(divide="ignore"):
        log_minus, log_plus = np.log(minus), np.log(plus)  # log 0 = -inf: that term is absent
    gap = np.abs(a - b)
    log_z = np.logaddexp(np.logaddexp(a + b + log_minus, gap + np.log1p(np.exp(-2 * gap)) + log_plus),
                         -(a + b) + log_minus) - math.log(4.0)
    log_z = np.maximum(log_z, 0.0)  # cosh d >= 1 (supplement A.4 clamps the argument of acosh likewise)
    # acosh(z) = log z + log(1 + sqrt(1 - z^-2)), exact for z near 1 and for z far beyond the float range
    return (log_z + np.log1p(np.sqrt(-np.expm1(-2 * log_z)))) / math.sqrt(c)


def lorentz_distance(x: np.ndarray, y: np.ndarray, c: float) -> np.ndarray:
    """``(N, M)`` geodesic distances (Eq. 3) between points given by their space components:
    acosh(-c <x, y>_L) / sqrt(c), <x, y>_L = -x0 y0 + <x_space, y_space>; the argument is clamped to >= 1
    (supplement A.4: "clamped to [1 + eps, inf)"; 1 here, so a point's distance to itself is 0). Computed in
    log space (:func:`_distance_polar`), so it stays finite where -c <x, y>_L itself would overflow."""
    (a, u), (b, w) = _polar(x, c, on_hyperboloid=True), _polar(y, c, on_hyperboloid=True)
    return _distance_polar(a, u, b, w, c)


def lorentz_scores(x: np.ndarray, t: np.ndarray, c: float, *, on_hyperboloid: bool = False) -> np.ndarray:
    """Negative Lorentz distances (Eq. 5 without its temperature) of tangent vectors ``x``, ``t`` mapped with
    :func:`exp_map0`, or of points already on the hyperboloid. The exponential map is never evaluated: a
    tangent vector's point is at distance sqrt(c) |v| from the origin in its direction, and the distance of
    two such points follows from the law of cosines in log space (:func:`_distance_polar`) -- the same
    numbers as mapping and measuring, and finite for norms where sinh(sqrt(c) |v|) overflows (clipping the
    norm instead, as some hyperbolic code does, would give every large embedding of one direction one score)."""
    (a, u), (b, w) = _polar(x, c, on_hyperboloid=on_hyperboloid), _polar(t, c, on_hyperboloid=on_hyperboloid)
    return -_distance_polar(a, u, b, w, c)


def similarity(x: np.ndarray, t: np.ndarray, setting: Setting) -> np.ndarray:
    """``(N, M)`` scores of ``N`` visual embeddings against ``M`` text embeddings under ``setting``."""
    if setting.similarity == "lorentz":
        return lorentz_scores(x, t, setting.curvature, on_hyperboloid=setting.on_hyperboloid)
    return cosine_scores(x, t)


def window_mean(per_frame: np.ndarray, slots: list[int]) -> np.ndarray:
    """An image encoder's score of one evaluated frame: the per-frame scores of its clip's T slots
    (rows of ``per_frame``; a frame repeated at a short video's end counts once per slot), averaged."""
    return per_frame[np.asarray(slots, dtype=np.int64)].mean(axis=0)


# ------------------------------------------------------------------ prediction

def argmax_label(scores: np.ndarray, labels: tuple[str, ...]) -> str:
    """The class with the highest score (equal scores: the one listed first)."""
    return labels[int(np.argmax(scores))]


def top_k(scores: np.ndarray, labels: tuple[str, ...], k: int) -> list[list]:
    """``[[label, score], ...]``: the ``k`` best classes, best first (equal scores in class order)."""
    order = np.argsort(-scores, kind="stable")[:k]
    return [[labels[i], round(float(scores[i]), 6)] for i in order]
