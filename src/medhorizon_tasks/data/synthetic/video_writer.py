"""MP4 writing and frame counting for the synthetic benchmarks (MedHorizon and the Sureon and
SurgHiBench samples): constant frame rate, yuv420p, libx264 where this PyAV build has it."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import numpy as np

# ---------------------------------------------------------------------------
# Video writing
# ---------------------------------------------------------------------------

_CODEC_CACHE: str | None = None


def pick_codec() -> str:
    """``"libx264"`` if this PyAV build can encode it, else ``"mpeg4"``."""
    global _CODEC_CACHE
    if _CODEC_CACHE is None:
        import av

        try:
            av.codec.Codec("libx264", "w")
            _CODEC_CACHE = "libx264"
        except Exception:  # noqa: BLE001 - any failure means "not available"
            _CODEC_CACHE = "mpeg4"
    return _CODEC_CACHE


def write_video(
    path: str | Path,
    frames: Iterable[np.ndarray],
    fps: float,
    width: int,
    height: int,
    codec: str | None = None,
) -> int:
    """Encode RGB uint8 ``frames`` to an MP4 at a constant ``fps``; return the number written.

    yuv420p, GOP 50, no B-frames; libx264 at CRF 18 / preset ultrafast, or
    MPEG-4 part 2 at a high bit rate with a low quantiser ceiling.
    """
    import av

    codec = codec or pick_codec()
    rate = Fraction(fps).limit_denominator(1001)
    count = 0
    with av.open(str(path), mode="w", format="mp4") as container:
        if codec == "libx264":
            stream = container.add_stream(
                codec,
                rate=rate,
                options={"crf": "18", "preset": "veryfast", "g": "50", "bf": "0"},
            )
        else:
            stream = container.add_stream(
                codec, rate=rate, options={"g": "50", "qmin": "1", "qmax": "4"}
            )
            stream.bit_rate = 4_000_000
        stream.width = width
        stream.height = height
        stream.pix_fmt = "yuv420p"
        stream.codec_context.gop_size = 50
        stream.codec_context.max_b_frames = 0
        time_base = Fraction(1) / rate
        stream.codec_context.time_base = time_base
        for frame_array in frames:
            frame = av.VideoFrame.from_ndarray(frame_array, format="rgb24")
            frame.pts = count
            frame.time_base = time_base
            for packet in stream.encode(frame):
                container.mux(packet)
            count += 1
        for packet in stream.encode(None):
            container.mux(packet)
    return count


def count_frames(path: str | Path) -> int:
    """Number of frames obtained by decoding the whole video with PyAV."""
    import av

    n = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for _ in container.decode(stream):
            n += 1
    return n
