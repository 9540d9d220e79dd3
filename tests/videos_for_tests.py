"""Small videos in the shapes that trip frame-exact readers, made with PyAV alone (no ffmpeg tool).

Every frame carries its source number as a row of black/white blocks (and a shifted texture), so a
wrong frame is visible in a pixel comparison. The ground truth is always :func:`sequential_frames`: a
plain decode from the start, as a player would show the file.
"""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import av
import numpy as np


def frame_image(i: int, width: int, height: int) -> np.ndarray:
    """RGB frame ``i``: a texture shifted by ``i`` pixels, the bits of ``i`` as 8x8 blocks along the top,
    and a marker in the top-left corner so that a rotation or flip shows."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    img = np.roll(base, i, axis=1)
    bits = (i >> np.arange(width // 8)) & 1
    img[8:16] = np.repeat(bits * 255, 8)[None, :, None].astype(np.uint8)
    img[:8, :8] = (255, 0, 0)
    img[:8, 8:16] = (0, 0, 255)
    return img


def _options(codec: str, gop: int, bframes: int) -> dict[str, str]:
    """A keyframe every ``gop`` frames exactly, ``bframes`` B-frames between references."""
    if codec == "libx264":
        params = f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes={bframes}:b-adapt=0"
        return {"crf": "20", "preset": "veryfast", "x264-params": params}
    if codec == "libx265":
        return {"x265-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes={bframes}:log-level=error"}
    return {"g": str(gop), "bf": str(bframes)}  # FFmpeg's own encoders (mpeg2video: open GOPs)


def encode(path: Path, n: int, *, fmt: str = "mp4", fps: int = 25, size: tuple[int, int] = (64, 48),
           gop: int = 25, bframes: int = 2, codec: str = "libx264") -> Path:
    """``n`` frames of :func:`frame_image` encoded into ``fmt`` (``"mp4"`` or ``"mpegts"``)."""
    width, height = size
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=Fraction(fps), options=_options(codec, gop, bframes))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(n):
            frame = av.VideoFrame.from_ndarray(frame_image(i, width, height), format="rgb24")
            frame.pts = i
            frame.time_base = Fraction(1, fps)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def remux(src: Path, dst: Path, *, fmt: str, skip: int = 0, shift: int = 0, options: dict | None = None) -> Path:
    """``src``'s video packets into ``dst`` (format ``fmt``), dropping the first ``skip`` packets in decode
    order and moving every timestamp ``shift`` ticks earlier (negative timestamps are allowed, as
    ``ffmpeg -ss T -c copy`` writes them)."""
    with av.open(str(src)) as i, av.open(str(dst), "w", format=fmt, options=options or {}) as o:
        s_in = i.streams.video[0]
        s_out = o.add_stream_from_template(s_in)
        for k, packet in enumerate(p for p in i.demux(s_in) if p.size):
            if k < skip:
                continue
            if packet.pts is not None:
                packet.pts -= shift
            if packet.dts is not None:
                packet.dts -= shift
            packet.stream = s_out
            o.mux(packet)
    return dst


def set_display_matrix(path: Path, degrees_clockwise: int) -> Path:
    """Overwrite the video track's ``tkhd`` matrix in place, as phones record portrait video: the stored
    picture is landscape and players turn it ``degrees_clockwise`` (90, 180 or 270) to show it."""
    data = bytearray(path.read_bytes())
    at = data.find(b"tkhd")
    assert at > 0 and data.find(b"tkhd", at + 4) < 0, "expected exactly one track"
    version = data[at + 4]
    # After the type: version and flags (4 bytes); creation and modification times, track id, a reserved
    # word and the duration (20 bytes, or 32 in version 1); reserved (8), layer, group, volume, reserved (8).
    matrix_at = at + 4 + 4 + (32 if version == 1 else 20) + 8 + 8
    one, zero = 1 << 16, 0
    # (a b u / c d v / x y w) in 16.16 (2.30 for u v w); x' = a x + c y + tx, as in ISO/IEC 14496-12.
    a, b, c, d = {90: (zero, one, -one, zero), 180: (-one, zero, zero, -one), 270: (zero, -one, one, zero)}[
        degrees_clockwise]
    data[matrix_at:matrix_at + 36] = struct.pack(">9i", a, b, 0, c, d, 0, 0, 0, 1 << 30)
    path.write_bytes(bytes(data))
    return path


def sequential_frames(path: Path) -> np.ndarray:
    """Every frame a plain decode from the start outputs, in order: frame ``i`` of the file."""
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(c.streams.video[0])])


def sequential_rotation(path: Path) -> int:
    """The display rotation FFmpeg reports on the first decoded frame (counter-clockwise degrees)."""
    with av.open(str(path)) as c:
        for frame in c.decode(c.streams.video[0]):
            return frame.rotation
    raise AssertionError("no frames")
