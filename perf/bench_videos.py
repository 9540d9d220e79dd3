"""Test videos of the speed scripts in ``perf/`` (generated once with PyAV, kept in ``~/.cache/medhorizon_tasks/bench/``).

Content ``pan`` (the small videos): a window panning over a smooth random texture, the frame's index stamped as
a row of binary blocks, so every frame differs from its neighbours. Content ``tissue`` (:data:`HD_VIDEOS`, the
pipeline's videos): like endoscopic footage, which is dearer to decode than a pan: a two-octave texture with
tissue colours under a vignette, moved non-rigidly (a slow camera drift plus travelling waves that bend rows and
columns, as breathing and peristalsis do) and sensor noise on every frame (a bank of Gaussian planes, shifted
per frame), so its bitrate at the encoder settings below falls in the range of real recordings
(:data:`REAL_BITRATE_MBPS`). Both: libx264 ``ultrafast`` CRF 23 with a keyframe every ``gop`` frames exactly and
``bframes`` B-frames per P-frame (as most recorders produce; ``ultrafast`` alone makes none).
:data:`HD_VIDEOS`: the sources' scale (1080p and 720p H.264 at 25 fps, GOPs of 10 s and 1 s).
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
TISSUE_VERSION = 1  # the same for the tissue content
#: Mbit/s of real surgical and endoscopic 1080p25 H.264 recordings, the range the tissue videos' bitrate must
#: fall in. No public surgical dataset documents its byte sizes (Cholec80, AutoLaparo: "size not documented",
#: shared/reference/upstream_datasets.md); the one published encoder setting found is the Toronto Video Atlas of
#: Surgery's for its surgical teaching videos, 1280x720 H.264 at 5 Mbit/s
#: (pie.med.utoronto.ca/TVASurg/video-editing-tips-for-surgeons-pt-1-resolution/), a web-delivery encode, so a
#: floor: 5 Mbit/s x 1080p's 2.25x the pixels = 11 Mbit/s at the same bits per pixel; recorders keep more. The
#: range below (4 to 20) spans a 1080p web encode to a recorder's archive stream; derived, not measured.
REAL_BITRATE_MBPS = (4.0, 20.0)


@dataclass(frozen=True)
class VideoSpec:
    """One test video's shape: the size, rate and GOP structure of a kind of source recording."""

    width: int
    height: int
    fps: int = 25
    gop: int = 250
    bframes: int = 3
    content: str = "pan"  # or "tissue": noise, texture and non-rigid motion like endoscopic footage

    def describe(self) -> str:
        return (f"{self.width}x{self.height} H.264 {self.fps} fps, GOP {self.gop / self.fps:g} s, {self.bframes} "
                f"B-frames, {self.content} content")


#: HD videos like the release's sources (Table 4 / the dataset card: laparoscopic and endoscopic recordings at
#: 720p-1080p, 25-30 fps; AutoLaparo 1920x1080 at 25 fps): a long GOP (10 s, the x264 default of 250 frames)
#: and a short one (1 s), with B-frames.
HD_VIDEOS = (VideoSpec(1920, 1080, 25, 250, 3, "tissue"), VideoSpec(1280, 720, 25, 25, 2, "tissue"))

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


def _encode(path: Path, n_frames: int, fps: int, width: int, height: int, gop: int, bframes: int,
            content: str = "pan") -> None:
    """Pan a window over a texture twice the frame size; stamp each frame's index as a row of binary blocks
    (``content="tissue"``: :func:`_tissue_planes` instead)."""
    import av

    if content == "tissue":
        return _write(path, _tissue_planes(n_frames, fps, width, height), fps, width, height, gop, bframes)

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


#: the sensor noise's standard deviation in luma levels (0-255): what brings the bitrate into REAL_BITRATE_MBPS
TISSUE_NOISE = 2.0
#: the fine texture's weight against the coarse one (0: smooth tissue only)
TISSUE_FINE = 0.1


def _tissue_planes(n_frames: int, fps: int, width: int, height: int, noise: float = TISSUE_NOISE, seed: int = 7,
                   fine_weight: float = TISSUE_FINE):
    """yuv420p frames (``(height * 3 // 2, width)`` uint8) of the tissue content; see the module docstring."""
    rng = np.random.default_rng(seed)
    margin_y, margin_x = height // 4, width // 4
    th, tw = height + 2 * margin_y, width + 2 * margin_x
    coarse = _smooth_texture(th, tw, seed).astype(np.float32)
    fine = _fine_texture(th, tw, seed + 1)
    luma = np.clip(70 + 0.5 * coarse + fine_weight * (fine - 128), 16, 235).astype(np.uint8).ravel()
    cw = tw // 2 + 2
    u_tex = (_smooth_texture(th // 2 + 2, cw, seed + 2) // 8 + 100).astype(np.uint8).ravel()  # reddish: U low,
    v_tex = (_smooth_texture(th // 2 + 2, cw, seed + 3) // 6 + 165).astype(np.uint8).ravel()  # V high
    yy, xx = np.mgrid[0:height + 16, 0:width + 16]
    r = np.hypot((yy - height / 2) / (height / 2), (xx - width / 2) / (width / 2))
    darken = -np.clip(100 * (r**2 - 0.3), 0, 160)  # the scope's light falls off towards the corners
    # sensor noise plus the vignette, one int16 plane per bank entry, read at a shifted window per frame
    bank = (rng.normal(0, noise, (8, height + 16, width + 16)) + darken).round().astype(np.int16)
    rows, cols = np.arange(height, dtype=np.int32), np.arange(width, dtype=np.int32)
    crows, ccols = np.arange(height // 2, dtype=np.int32), np.arange(width // 2, dtype=np.int32)
    amp = max(2.0, height / 120)  # wave amplitude in pixels
    buf = np.empty((height * 3 // 2, width), np.uint8)
    index = np.empty((height, width), np.int32)
    y16 = np.empty((height, width), np.int16)
    h4 = height // 4
    for i in range(n_frames):
        t = i / fps
        oy = margin_y + int(margin_y * 0.8 * np.sin(t * 0.21))  # slow camera drift
        ox = margin_x + int(margin_x * 0.8 * np.sin(t * 0.17 + 1.0))
        dx = (amp * np.sin(2 * np.pi * rows / (height / 1.7) + 2.1 * t)).astype(np.int32)  # rows bend
        dy = (amp * np.sin(2 * np.pi * cols / (width / 2.3) + 1.7 * t)).astype(np.int32)  # columns bend
        np.add(((rows + oy) * tw)[:, None], (dy * tw)[None, :], out=index)
        index += (cols + ox)[None, :]
        index += dx[:, None]
        k, sy, sx = i % 8, int(rng.integers(16)), int(rng.integers(16))
        np.add(np.take(luma, index), bank[k, sy:sy + height, sx:sx + width], out=y16, casting="unsafe")
        np.clip(y16, 0, 255, out=y16)
        buf[:height] = y16
        cindex = ((crows + oy // 2) * cw)[:, None] + (dy[::2] // 2 * cw)[None, :] + (ccols + ox // 2)[None, :] \
            + (dx[::2] // 2)[:, None]
        buf[height:height + h4] = np.take(u_tex, cindex).reshape(h4, width)
        buf[height + h4:] = np.take(v_tex, cindex).reshape(h4, width)
        yield buf


def _fine_texture(height: int, width: int, seed: int) -> np.ndarray:
    """Finer detail than :func:`_smooth_texture` (vessels, mucosa): blurred noise at a 4-pixel cell, float32."""
    rng = np.random.default_rng(seed)
    cell = 4
    coarse = rng.integers(0, 256, (height // cell + 2, width // cell + 2)).astype(np.float32)
    blocky = np.repeat(np.repeat(coarse, cell, 0), cell, 1)[:height, :width]
    return (blocky + np.roll(blocky, 2, 0) + np.roll(blocky, 2, 1) + np.roll(blocky, (2, 2), (0, 1))) / 4


def _write(path: Path, planes, fps: int, width: int, height: int, gop: int, bframes: int) -> None:
    """Encode yuv420p ``planes`` at the benchmark's encoder settings."""
    import av

    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=Fraction(fps), options={
            "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0",  # a keyframe every `gop` frames exactly
            "preset": "ultrafast", "crf": "23", "x264-params": f"bframes={bframes}:b-adapt=0",
        })
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i, buf in enumerate(planes):
            frame = av.VideoFrame.from_ndarray(buf, format="yuv420p")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def bitrate_mbps(path: Path) -> float:
    """The video stream's mean bitrate in Mbit/s: its packets' bytes over its duration."""
    import av

    with av.open(str(path)) as src:
        stream = src.streams.video[0]
        total, n = 0, 0
        for packet in src.demux(stream):
            total += packet.size
            n += bool(packet.size)
        seconds = n / float(stream.average_rate)
    return total * 8 / seconds / 1e6


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
                       bframes=spec.bframes, directory=directory, content=spec.content)


def bench_video(seconds: int, *, fps: int = 25, width: int = 320, height: int = 240, gop: int = 250,
                bframes: int = 3, directory: Path = BENCH_DIR, content: str = "pan") -> Path:
    version = TISSUE_VERSION if content == "tissue" else GENERATOR_VERSION
    name = f"{content}_v{version}_{width}x{height}_{fps}fps_{seconds}s_gop{gop}_bf{bframes}.mp4"
    return _cached_file(directory / name, lambda tmp: _encode(tmp, seconds * fps, fps, width, height, gop, bframes,
                                                              content))


def long_video(segment_s: int, copies: int, *, fps: int = 25, width: int = 64, height: int = 48, gop: int = 250,
               bframes: int = 3, directory: Path = BENCH_DIR) -> Path:
    segment = bench_video(segment_s, fps=fps, width=width, height=height, gop=gop, bframes=bframes,
                          directory=directory)
    return _cached_file(directory / f"{segment.stem}_x{copies}.mp4", lambda tmp: _repeat(segment, tmp, copies))
