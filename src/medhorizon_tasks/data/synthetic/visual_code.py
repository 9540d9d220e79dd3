"""A tiny visual code that survives video compression and resizing.

The synthetic MedHorizon benchmark (:mod:`medhorizon_tasks.data.synthetic.medhorizon`)
draws each question's answer into the frames of its evidence windows, so a
program that reads frames answers a question correctly exactly when the frame
sampler delivered at least one evidence frame.

Layout
------
The frame is divided into a grid of **4 columns x 3 rows** of equal cells that
cover the whole frame (cell edges at ``round(c * W / 4)`` and
``round(r * H / 3)``)::

    +-------+-------+-------+-------+
    | WHITE | BLACK | WHITE | BLACK |   row 0: sync pattern
    +-------+-------+-------+-------+
    |  b7   |  b6   |  b5   |  b4   |   row 1: bits 7..4
    +-------+-------+-------+-------+
    |  b3   |  b2   |  b1   |  b0   |   row 2: bits 3..0
    +-------+-------+-------+-------+

The 8-bit payload is ``(tag << 2) | letter_index`` written MSB first, row-major
(``b7`` .. ``b2`` = the 6-bit ``tag`` in 0..63, ``b1 b0`` = the 2-bit
``letter_index`` in 0..3, i.e. A..D). A cell is painted uniformly: bit 1 = white
(255, 255, 255), bit 0 = black (0, 0, 0). Full-range black and white, uniform
cells and a coarse grid (16x16-pixel cells at 64x48, i.e. one H.264 macroblock
per cell) let the code survive H.264 / MPEG-4 compression at 64x48 and any
resize down to 32x24.

Decoding converts to grayscale (ITU-R 601: ``0.299 R + 0.587 G + 0.114 B``,
the same weights as PIL's ``"L"`` mode), takes the mean of the central 60% (in
each direction) of every cell, and accepts the frame only if the sync row reads
white (> 170), black (< 85), white, black and every bit cell is clearly white
(> 170) or clearly black (< 85).

Background (non-evidence) frames from :func:`background_frame` keep every
channel within [60, 195] and, more strictly, their grayscale within about
[97, 150], so *no* cell can ever read as white or black and
:func:`decode_code` returns ``None`` on them, before and after compression.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "BLACK_THRESHOLD",
    "GRID_COLS",
    "GRID_ROWS",
    "SYNC_PATTERN",
    "WHITE_THRESHOLD",
    "BackgroundGenerator",
    "background_frame",
    "decode_code",
    "encode_code",
]

GRID_COLS = 4
GRID_ROWS = 3
SYNC_PATTERN = (1, 0, 1, 0)
WHITE_THRESHOLD = 170.0
BLACK_THRESHOLD = 85.0
_CENTRE_FRACTION = 0.6  # central 60% of each cell, per direction

_GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float64)


def _edges(n: int, parts: int) -> list[int]:
    return [round(i * n / parts) for i in range(parts + 1)]


def _payload_bits(tag: int, letter_index: int) -> list[int]:
    value = (tag << 2) | letter_index
    return [(value >> (7 - i)) & 1 for i in range(8)]


def encode_code(tag: int, letter_index: int, height: int, width: int) -> np.ndarray:
    """Return an ``(height, width, 3)`` uint8 RGB frame carrying ``(tag, letter_index)``.

    ``tag`` must be in 0..63 and ``letter_index`` in 0..3 (A..D).
    """
    tag = int(tag)
    letter_index = int(letter_index)
    if not 0 <= tag < 64:
        raise ValueError(f"tag must be in 0..63, got {tag}")
    if not 0 <= letter_index < 4:
        raise ValueError(f"letter_index must be in 0..3, got {letter_index}")
    if height < GRID_ROWS or width < GRID_COLS:
        raise ValueError(f"frame too small for the code grid: {width}x{height}")
    cells = list(SYNC_PATTERN) + _payload_bits(tag, letter_index)
    xs = _edges(width, GRID_COLS)
    ys = _edges(height, GRID_ROWS)
    frame = np.zeros((height, width, 3), dtype=np.uint8)
    for idx, bit in enumerate(cells):
        if bit:
            r, c = divmod(idx, GRID_COLS)
            frame[ys[r] : ys[r + 1], xs[c] : xs[c + 1], :] = 255
    return frame


def _to_gray(frame) -> np.ndarray:
    """Grayscale float array (H, W) from an RGB ndarray or a PIL image."""
    if not isinstance(frame, np.ndarray):
        # PIL.Image (or anything with a ``convert``): go through RGB so every
        # mode (P, RGBA, L, YCbCr...) is handled the same way.
        convert = getattr(frame, "convert", None)
        if convert is None:
            raise TypeError(
                f"expected an ndarray or a PIL.Image, got {type(frame).__name__}"
            )
        frame = np.asarray(convert("RGB"))
    arr = np.asarray(frame)
    if arr.ndim == 2:
        return arr.astype(np.float64, copy=False)
    if arr.ndim != 3 or arr.shape[2] < 3:
        raise ValueError(f"expected an (H, W, 3) frame, got shape {arr.shape}")
    return arr[..., :3].astype(np.float64) @ _GRAY_WEIGHTS


def _centre_span(i: int, cells: int, size: int, margin: float) -> tuple[int, int]:
    """Pixel range [lo, hi) of the centre of cell ``i`` of ``cells`` along an axis of ``size`` pixels, ``margin``
    of the cell left out on each side; at least one pixel, the cell's middle one."""
    lo_f, hi_f = i * size / cells, (i + 1) * size / cells
    extent = hi_f - lo_f
    lo = math.ceil(lo_f + margin * extent - 1e-9)
    hi = math.floor(hi_f - margin * extent + 1e-9)
    if hi <= lo:
        lo = min(int(lo_f + extent / 2), size - 1)
        hi = lo + 1
    return lo, hi


def _cell_means(gray: np.ndarray) -> list[float]:
    h, w = gray.shape
    margin = (1.0 - _CENTRE_FRACTION) / 2.0
    means: list[float] = []
    for r in range(GRID_ROWS):
        y0, y1 = _centre_span(r, GRID_ROWS, h, margin)
        for c in range(GRID_COLS):
            x0, x1 = _centre_span(c, GRID_COLS, w, margin)
            means.append(float(gray[y0:y1, x0:x1].mean()))
    return means


def decode_code(frame) -> tuple[int, int] | None:
    """Read ``(tag, letter_index)`` from a frame, or ``None`` if it carries no code.

    ``frame`` is an ``(H, W, 3)`` uint8 RGB ndarray or a ``PIL.Image``.
    """
    gray = _to_gray(frame)
    if gray.shape[0] < GRID_ROWS or gray.shape[1] < GRID_COLS:
        return None
    means = _cell_means(gray)
    for want, got in zip(SYNC_PATTERN, means[:GRID_COLS]):
        if want and not got > WHITE_THRESHOLD:
            return None
        if not want and not got < BLACK_THRESHOLD:
            return None
    value = 0
    for got in means[GRID_COLS:]:
        if got > WHITE_THRESHOLD:
            bit = 1
        elif got < BLACK_THRESHOLD:
            bit = 0
        else:
            return None
        value = (value << 1) | bit
    return value >> 2, value & 3


# ---------------------------------------------------------------------------
# Background: smooth, slowly varying "tissue" with a few drifting blobs.
# ---------------------------------------------------------------------------

# Per style: per-channel (offset, gain) applied to a field f in [0, 1]; the
# result is clipped per channel to the (lo, hi) bounds below, which keep every
# channel within [60, 195] and the grayscale within ~[97, 150].
_STYLES: dict[str, dict[str, tuple[float, ...]]] = {
    # reddish-pink tissue (endoscopy / surgery)
    "surgical": {
        "offset": (152.0, 78.0, 80.0),
        "gain": (42.0, 44.0, 40.0),
        "lo": (150.0, 75.0, 75.0),
        "hi": (195.0, 125.0, 125.0),
    },
    # grey speckle-free "ultrasound" look
    "ultrasound": {
        "offset": (98.0, 98.0, 98.0),
        "gain": (50.0, 50.0, 50.0),
        "lo": (95.0, 95.0, 95.0),
        "hi": (150.0, 150.0, 150.0),
    },
}


class BackgroundGenerator:
    """Deterministic background frames ``gen(t)`` for time ``t`` in seconds.

    The content is a smooth field (two drifting low-frequency 1-D profiles)
    plus three gaussian blobs moving on slow Lissajous paths, mapped to a
    reddish tissue palette (``style="surgical"``) or a grey one
    (``style="ultrasound"``). Same ``(height, width, seed, style, t)`` -> same
    pixels.
    """

    def __init__(self, height: int, width: int, seed: int = 0, style: str = "surgical"):
        if style not in _STYLES:
            raise ValueError(
                f"unknown style {style!r}; expected one of {sorted(_STYLES)}"
            )
        self.height = int(height)
        self.width = int(width)
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x5EED])
        self._x = np.linspace(0.0, 1.0, self.width, dtype=np.float32)
        self._y = np.linspace(0.0, 1.0, self.height, dtype=np.float32)
        # slowly varying profiles: periods of tens of seconds to minutes
        self._kx = rng.uniform(0.6, 1.6)
        self._ky = rng.uniform(0.6, 1.6)
        self._wx = 2 * math.pi / rng.uniform(40.0, 160.0)
        self._wy = 2 * math.pi / rng.uniform(40.0, 160.0)
        self._px, self._py = rng.uniform(0, 2 * math.pi, size=2)
        self._blobs = []
        for _ in range(3):
            self._blobs.append(
                {
                    "fx": 2 * math.pi / rng.uniform(20.0, 90.0),
                    "fy": 2 * math.pi / rng.uniform(20.0, 90.0),
                    "phx": rng.uniform(0, 2 * math.pi),
                    "phy": rng.uniform(0, 2 * math.pi),
                    "sigma": rng.uniform(0.08, 0.2),
                    "amp": rng.uniform(0.15, 0.3) * rng.choice([-1.0, 1.0]),
                }
            )
        st = _STYLES[style]
        levels = np.linspace(0.0, 1.0, 256, dtype=np.float64)[:, None]
        lut = levels * np.array(st["gain"]) + np.array(st["offset"])
        lut = np.clip(lut, np.array(st["lo"]), np.array(st["hi"]))
        self._lut = np.round(lut).astype(np.uint8)  # (256, 3): field level -> RGB

    def field(self, t: float) -> np.ndarray:
        """The scalar field in [0, 1], shape (H, W), float32.

        ``f(y, x) = fy(y) + fx(x) + sum_k amp_k * gy_k(y) * gx_k(x)``, computed
        as one rank-5 matrix product.
        """
        t = float(t)
        h, w = self.height, self.width
        left = np.empty((h, 5), dtype=np.float32)
        right = np.empty((5, w), dtype=np.float32)
        left[:, 0] = 0.25 + 0.25 * np.sin(
            2 * math.pi * self._ky * self._y + (self._wy * t + self._py)
        )
        right[0] = 1.0
        left[:, 1] = 1.0
        right[1] = 0.25 + 0.25 * np.sin(
            2 * math.pi * self._kx * self._x + (self._wx * t + self._px)
        )
        for k, b in enumerate(self._blobs, start=2):
            cx = 0.5 + 0.35 * math.sin(b["fx"] * t + b["phx"])
            cy = 0.5 + 0.35 * math.sin(b["fy"] * t + b["phy"])
            inv = -1.0 / (2.0 * b["sigma"] ** 2)
            left[:, k] = b["amp"] * np.exp(inv * (self._y - cy) ** 2)
            right[k] = np.exp(inv * (self._x - cx) ** 2)
        f = left @ right
        np.clip(f, 0.0, 1.0, out=f)
        return f

    def __call__(self, t: float) -> np.ndarray:
        f = self.field(t)
        f *= 255.0
        f += 0.5
        return np.take(self._lut, f.astype(np.uint8), axis=0)


def background_frame(
    t: float, height: int, width: int, *, seed: int = 0, style: str = "surgical"
) -> np.ndarray:
    """One ``(height, width, 3)`` uint8 background frame at time ``t`` seconds.

    Convenience wrapper around :class:`BackgroundGenerator` (build one and call
    it repeatedly when rendering many frames). Every channel stays within
    [60, 195] and the grayscale within ~[97, 150], so :func:`decode_code`
    never finds a code in it.
    """
    return BackgroundGenerator(height, width, seed=seed, style=style)(t)
