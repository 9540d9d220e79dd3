"""Generation part (draft)."""
from __future__ import annotations

import os
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

BENCH_DIR = Path.home() / ".cache" / "medhorizon_tasks" / "bench"
GENERATOR_VERSION = 1


def _smooth_texture(height: int, width: int, seed: int) -> np.ndarray:
    """A uint8 plane of blurred blocky noise: detail an encoder must spend bits on, but not white noise."""
    rng = np.random.default_rng(seed)
    cell = 16
    coarse = rng.integers(0, 256, (height // cell + 2, width // cell + 2)).astype(np.float64)
    blocky = np.repeat(np.repeat(coarse, cell, 0), cell, 1)
    # Box blur of size `cell` via a summed-area table.
    sat = np.pad(blocky.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    blur = (sat[cell:, cell:] - sat[:-cell, cell:] - sat[cell:, :-cell] + sat[:-cell, :-cell]) / cell**2
    return blur[:height, :width].astype(np.uint8)


def _encode(path: Path, n_frames: int, fps: int, width: int, height: int, gop: int) -> None:
    """Pan a window over a texture twice the frame size; stamp each frame's index as a row of binary blocks."""
    import av

    tex_y = _smooth_texture(2 * height, 2 * width, 1)
    tex_u = _smooth_texture(height, width, 2) // 4 + 96  # mild colours: chroma near neutral grey
    tex_v = _smooth_texture(height, width, 3) // 4 + 96
    bit_w, bit_h, n_bits = max(2, width // 24), max(2, height // 30), 24
    buf = np.empty((height * 3 // 2, width), np.uint8)  # yuv420p: Y rows, then U and V packed two rows per line
    h4 = height // 4
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=Fraction(fps), options={
            "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0",  # a keyframe every `gop` frames exactly
            "preset": "ultrafast", "crf": "23",
            "x264-params": "bframes=3:b-adapt=0",  # B-frames (ultrafast has none), as most recorders produce
        })
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(n_frames):
            dx = int(width / 2 * (1 + np.sin(i / 97.0)))
            dy = int(height / 2 * (1 + np.cos(i / 131.0)))
            buf[:height] = tex_y[dy:dy + height, dx:dx + width]
            bits = (i >> np.arange(n_bits)) & 1
            buf[:bit_h, :bit_w * n_bits] = np.repeat(bits * 255, bit_w)[None, :]
            buf[height:height + h4] = tex_u[dy // 2:dy // 2 + height // 2, dx // 2:dx // 2 + width // 2].reshape(h4, width)
            buf[height + h4:] = tex_v[dy // 2:dy // 2 + height // 2, dx // 2:dx // 2 + width // 2].reshape(h4, width)
            frame = av.VideoFrame.from_ndarray(buf, format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def bench_video(seconds: int, *, fps: int = 25, width: int = 320, height: int = 240, gop: int = 250,
                directory: Path = BENCH_DIR) -> Path:
    path = directory / f"pan_v{GENERATOR_VERSION}_{width}x{height}_{fps}fps_{seconds}s_gop{gop}.mp4"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gen-", suffix=".mp4")
    os.close(fd)
    t0 = time.perf_counter()
    try:
        _encode(Path(tmp), seconds * fps, fps, width, height, gop)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"generated {path.name} in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


if __name__ == "__main__":
    import sys
    bench_video(int(sys.argv[1]))
