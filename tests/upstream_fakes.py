"""Small fakes of the eight upstream downloads and of a MedHorizon release that points into them.

Every frame ``i`` of every fake video is one flat grey level, :func:`level`, so a decoded frame tells
which upstream frame it is (to within the codec's error), whatever container carried it.
"""

from __future__ import annotations

import io
import json
import zipfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

SIZE = (64, 48)


def level(i: int) -> int:
    """The grey level of frame ``i``: distinct for the first 30 frames, far apart from its neighbours."""
    return 16 + (i * 37) % 224


def image(i: int) -> np.ndarray:
    return np.full((SIZE[1], SIZE[0], 3), level(i), np.uint8)


def encode_video(path: Path, n: int, fps: int = 5) -> Path:
    """``n`` frames of :func:`image` as H.264 in ``path`` (container from the suffix)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=Fraction(fps), options={"crf": "10", "preset": "ultrafast",
                                                                         "x264-params": "keyint=10:bframes=0"})
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        for i in range(n):
            frame = av.VideoFrame.from_ndarray(image(i), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def write_frames(folder: Path, names: dict[int, str], fmt: str) -> Path:
    """Frame ``i`` of :func:`image` saved as ``folder/names[i]`` (``fmt``: ``"JPEG"`` or ``"PNG"``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, name in names.items():
        buf = io.BytesIO()
        Image.fromarray(image(i)).save(buf, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
        (folder / name).write_bytes(buf.getvalue())
    return folder


def record(key: str, dataset: str, video_path: str, num_frames: int, fps: float, uids: list[int]) -> dict:
    """One MedHorizon release record (one video, its questions)."""
    return {
        "key": key, "dataset": dataset, "organ": "x", "scene_type": "surgery", "duration_tier": "short",
        "video_path": video_path, "num_frames": num_frames, "fps": fps, "duration_seconds": num_frames / fps,
        "split": "test",
        "qa": [{"uid": u, "question": f"Question {u} about {key}?", "options": ["one", "two", "three", "four"],
                "answer": "ABCD"[u % 4], "task_id": "PR", "task_name": "phase recognition",
                "task_class": "fine", "category": "c"} for u in uids],
    }


def write_release(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


N = 20    # frames of every fake video
FPS = 5   # their rate: 4 s each

#: One good video per source: (dataset, video_path, data fps, data frame count).
GOOD = [
    ("AutoLaparo", "autolaparo/01.mp4", FPS, N),
    ("Galar", "galar/003.mp4", FPS, N),
    ("GraSP", "grasp/CASE041.mp4", FPS, N),
    ("MultiBypass", "multibypass/BBP01.mp4", FPS, N),
    ("PitVQA", "pitvqa/video_02.mp4", 25, 25 * 10),   # the PitVis video is 10 s at 25 fps; only 1 FPS frames exist
    ("REAL-Colon", "real_colon/002-010.mp4", FPS, N),
    ("TMVP", "tmvp/001.mp4", FPS, N),
    ("US-Study", "us_study/01-lus.mp4", FPS, N),
]
#: More MultiBypass videos: one in a second zip-part folder, one only inside a zip archive.
MORE = [
    ("MultiBypass", "multibypass/SBP05.mp4", FPS, N),
    ("MultiBypass", "multibypass/SBP07.mp4", FPS, N),
]
#: Videos that cannot be made usable, and why.
BAD = {
    "real_colon/003-001.mp4": ("REAL-Colon", FPS, N, "missing"),          # no frames downloaded
    "real_colon/001-002.mp4": ("REAL-Colon", FPS, N, "corrupt frame"),    # one truncated JPEG
    "autolaparo/02.mp4": ("AutoLaparo", FPS, 30 * FPS, "mismatch"),       # the data say 30 s, the file is 4 s
    "us_study/02-lus.mp4": ("US-Study", FPS, N, "corrupt video"),         # not a video at all
    "grasp/CASE053.mp4": ("GraSP", FPS, N, "missing"),                    # not in the download
    "pitvqa/video_05.mp4": ("PitVQA", 25, 25 * 10, "missing"),            # no frame folder
    "galar/005.mp4": ("Galar", FPS, N, "corrupt frame"),                  # one truncated PNG
    "tmvp/002.mp4": ("TMVP", FPS, 2 * N, "mismatch"),                     # the data say 8 s, the frames 4 s
}
PITVQA_DROPPED = 4  # the blurred frame PitVQA left out


def release(tmp: Path, which=("good", "more", "bad")) -> Path:
    rows = []
    if "good" in which:
        rows += GOOD
    if "more" in which:
        rows += MORE
    if "bad" in which:
        rows += [(ds, vp, fps, n) for vp, (ds, fps, n, _) in BAD.items()]
    records = [record(Path(vp).stem, ds, vp, n, fps, [100 * k + j for j in range(2)])
               for k, (ds, vp, fps, n) in enumerate(rows, 1)]
    return write_release(tmp / f"release_{'_'.join(which)}.jsonl", records)


def upstream(tmp: Path) -> dict[str, Path]:
    """The fake downloads, one folder per source, in each source's own layout."""
    up = {name: tmp / "downloads" / name for name in
          ("AutoLaparo", "Galar", "GraSP", "MultiBypass", "PitVQA", "REAL-Colon", "TMVP", "US-Study")}
    encode_video(up["AutoLaparo"] / "Task1" / "videos" / "01.mp4", N)
    encode_video(up["AutoLaparo"] / "Task1" / "videos" / "02.mp4", N)
    (up["AutoLaparo"] / "Task1" / "labels").mkdir(parents=True, exist_ok=True)
    (up["AutoLaparo"] / "Task1" / "labels" / "label_01.txt").write_text("Frame\tPhase\n")
    write_frames(up["Galar"] / "003", {i: f"frame_{i:06d}.PNG" for i in range(N)}, "PNG")
    bad_png = write_frames(up["Galar"] / "005", {i: f"frame_{i:06d}.PNG" for i in range(N)}, "PNG") / "frame_000011.PNG"
    bad_png.write_bytes(bad_png.read_bytes()[:60])
    (up["Galar"] / "003.csv").write_text("frame,label\n")
    encode_video(up["GraSP"] / "videos" / "CASE041.mp4", N)
    encode_video(up["MultiBypass"] / "multibypass01" / "BernBypass70" / "videos" / "BBP01.mp4", N)
    encode_video(up["MultiBypass"] / "multibypass02" / "StrasBypass70" / "videos" / "SBP05.mp4", N)
    scratch = encode_video(tmp / "scratch" / "SBP07.mp4", N)
    with zipfile.ZipFile(up["MultiBypass"] / "multibypass03.zip", "w") as z:
        z.write(scratch, "StrasBypass70/videos/SBP07.mp4")
    write_frames(up["PitVQA"] / "video_02", {i: f"{i:05d}.png" for i in range(10) if i != PITVQA_DROPPED}, "PNG")
    write_frames(up["REAL-Colon"] / "002-010_frames", {i: f"002-010_{i}.jpg" for i in range(N)}, "JPEG")
    bad = write_frames(up["REAL-Colon"] / "001-002_frames", {i: f"001-002_{i}.jpg" for i in range(N)}, "JPEG")
    damaged = bad / "001-002_7.jpg"
    damaged.write_bytes(damaged.read_bytes()[:200])
    (up["REAL-Colon"] / "video_info.csv").write_text("unique_video_name,fps,num_frames\n002-010,5,20\n")
    write_frames(up["TMVP"] / "frames" / "001", {i: f"{i + 1:05d}.jpg" for i in range(N)}, "JPEG")
    write_frames(up["TMVP"] / "frames" / "002", {i: f"{i + 1:05d}.jpg" for i in range(N)}, "JPEG")
    encode_video(up["US-Study"] / "01-lus.mp4", N)
    (up["US-Study"] / "02-lus.mp4").write_bytes(b"this is not a video" * 100)
    return up
