"""Test videos of the speed scripts in ``perf/`` (generated once with PyAV, kept in ``~/.cache/medhorizon_tasks/bench/``).

Content: a window panning over a smooth random texture, the frame's index stamped as a row of binary
blocks, so every frame differs from its neighbours; libx264 ``ultrafast`` with a keyframe every ``gop``
frames exactly and ``bframes`` B-frames per P-frame (as most recorders produce; ``ultrafast`` alone makes
none). :data:`HD_VIDEOS`: the sources' scale (1080p and 720p H.264 at 25 fps, GOPs of 10 s and 1 s).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

BENCH_DIR = Path.home() / ".cache" / "medhorizon_tasks" / "bench"
GENERATOR_VERSION = 1  # part of the file names: bump when the generated content changes


@dataclass(frozen=True)
class VideoSpec:
    """One test video's shape: the size, rate and GOP structure of a kind of source recording."""

    width: int
    height: int
    fps: int = 25
    gop: int = 250
    bframes: int = 3

    def describe(self) -> str:
        return f"{self.width}x{self.height} H.264 {self.fps} fps, GOP {self.gop / self.fps:g} s, {self.bframes} B-frames"


#: HD videos like the release's sources (Table 4 / the dataset card: laparoscopic and endoscopic recordings at
#: 720p-1080p, 25-30 fps; AutoLaparo 1920x1080 at 25 fps): a long GOP (10 s, the x264 default of 250 frames)
#: and a short one (1 s), with B-frames.
HD_VIDEOS = (VideoSpec(1920, 1080, 25, 250, 3), VideoSpec(1280, 720, 25, 25, 2))

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


def _encode(path: Path, n_frames: int, fps: int, width: int, height: int, gop: int, bframes: int) -> None:
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
            "preset": "ultrafast", "crf": "23", "x264-params": f"bframes={bframes}:b-adapt=0",
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


def _repeat(segment: Path, path: Path, copies: int) -> None:
    """Write ``copies`` copies of ``segment`` back to back by remuxing its packets with shifted timestamps."""
    import av

    with av.open(str(segment)) as src:
        s_in = src.streams.video[0]
        packets = [(bytes(p), p.pts, p.dts, p.duration, p.is_keyframe) for p in src.demux(s_in) if p.size]
        pts = sorted(p[1] for p in packets)
        span = len(pts) * (pts[1] - pts[0])  # constant frame rate: copy r starts r * span ticks later
        with av.open(str(path), "w", format="mp4") as out:
            s_out = out.add_stream_from_template(s_in)
            for r in range(copies):
                for data, p_pts, p_dts, duration, key in packets:
                    packet = av.Packet(data)
                    packet.pts, packet.dts, packet.duration = p_pts + r * span, p_dts + r * span, duration
                    packet.is_keyframe = key
                    packet.time_base, packet.stream = s_in.time_base, s_out
                    out.mux(packet)


def _cached_file(path: Path, make) -> Path:
    """``path``, made by ``make(tmp_path)`` first if it does not exist (atomically: an interrupted run
    leaves no half-written video behind under the final name)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".gen-", suffix=".mp4")
    os.close(fd)
    t0 = time.perf_counter()
    try:
        make(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"generated {path} in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def spec_video(spec: VideoSpec, seconds: int, directory: Path = BENCH_DIR) -> Path:
    """The test video of ``spec``, ``seconds`` long."""
    return bench_video(seconds, fps=spec.fps, width=spec.width, height=spec.height, gop=spec.gop,
                       bframes=spec.bframes, directory=directory)


def bench_video(seconds: int, *, fps: int = 25, width: int = 320, height: int = 240, gop: int = 250,
                bframes: int = 3, directory: Path = BENCH_DIR) -> Path:
    name = f"pan_v{GENERATOR_VERSION}_{width}x{height}_{fps}fps_{seconds}s_gop{gop}_bf{bframes}.mp4"
    return _cached_file(directory / name, lambda tmp: _encode(tmp, seconds * fps, fps, width, height, gop, bframes))


def long_video(segment_s: int, copies: int, *, fps: int = 25, width: int = 64, height: int = 48, gop: int = 250,
               bframes: int = 3, directory: Path = BENCH_DIR) -> Path:
    segment = bench_video(segment_s, fps=fps, width=width, height=height, gop=gop, bframes=bframes,
                          directory=directory)
    return _cached_file(directory / f"{segment.stem}_x{copies}.mp4", lambda tmp: _repeat(segment, tmp, copies))
