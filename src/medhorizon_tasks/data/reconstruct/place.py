"""Placing one video under the root: a hard link, a relative symlink or a copy of a video file, a member
extracted from a zip archive, or a folder of frames muxed losslessly into the video file (every frame file one
packet, byte for byte). Writes go to a temporary file beside the target, renamed into place."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import shutil
import zipfile
import zlib
from fractions import Fraction
from pathlib import Path
from typing import Callable

from ...core.errors import DataError, MedHorizonError
from ...core.file_identity import file_identity
from ...core.paths import resolve_video_path
from ...core.safeio import read_bytes
from ..sources import Layout
from .find import Candidate, outside_download

__all__ = ["ReconstructError", "frames_of", "assemble_frames", "materialize", "same_content", "glob_escape"]

_PARTIAL = ".partial"


class ReconstructError(MedHorizonError):
    """One video could not be placed (a damaged frame, a link across filesystems ...); the run goes on."""


# ------------------------------------------------------------------ assembling frames

def frames_of(folder: Path, layout: Layout) -> list[tuple[int, Path]]:
    """``(frame number, file)`` of every frame in ``folder``, by number; ReconstructError on a number twice."""
    frames: dict[int, Path] = {}
    with os.scandir(folder) as it:
        for e in it:
            n = layout.frame_number(e.name)
            if n is None or not e.is_file():
                continue
            if n in frames:
                raise ReconstructError(f"frame number {n} is given twice in {folder}: {frames[n].name} and {e.name}")
            frames[n] = Path(e.path)
    if not frames:
        raise ReconstructError(f"no frame files in {folder}")
    return sorted(frames.items())


_CODECS = {".jpg": "mjpeg", ".jpeg": "mjpeg", ".png": "png"}
_FORMATS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mkv": "matroska"}


def _image_size(data: bytes, path: Path, codec: str) -> tuple[int, int]:
    """The image's (width, height) from its header; ReconstructError for a damaged or truncated file."""
    from PIL import Image

    if codec == "mjpeg" and not data.rstrip(b"\x00")[-2:] == b"\xff\xd9":
        raise ReconstructError(f"frame {path} is damaged: the JPEG has no end marker (truncated download or "
                               "extraction?)")
    if codec == "png" and b"IEND" not in data[-16:]:
        raise ReconstructError(f"frame {path} is damaged: the PNG has no IEND chunk (truncated?)")
    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.size
    except Exception as exc:  # PIL raises several types for a damaged header
        raise ReconstructError(f"frame {path} is not a readable image ({type(exc).__name__}: {exc})") from None


def _rate(fps: float) -> Fraction:
    return Fraction(fps).limit_denominator(1001)


def assemble_frames(frames: list[tuple[int, Path]], out: Path, fps: float,
                    on_frame: Callable[[], None] | None = None) -> dict:
    """Mux ``frames`` (``(number, file)``, sorted) into the video file ``out`` without re-encoding.

    Frame ``n`` is shown at ``(n - first number) / fps`` seconds. The container follows ``out``'s
    suffix (MP4 unless ``.mov`` / ``.mkv``). ReconstructError names the first damaged or odd frame.
    """
    import av

    suffixes = {p.suffix.lower() for _, p in frames}
    codecs = {_CODECS.get(s) for s in suffixes}
    if len(codecs) != 1 or None in codecs:
        raise ReconstructError(f"frames in {frames[0][1].parent} must all be JPEG or all PNG, found "
                               f"{', '.join(sorted(suffixes))}")
    codec = codecs.pop()
    fmt = _FORMATS.get(out.suffix.lower(), "mp4")
    if fmt == "matroska" and codec == "png":
        fmt = "mp4"  # Matroska has no PNG codec id; FFmpeg reads the file by its content, not its name
    rate = _rate(fps)
    first = frames[0][0]
    size = None
    try:
        with av.open(str(out), "w", format=fmt) as container:
            stream = container.add_stream(codec, rate=rate)
            for number, path in frames:
                data = read_bytes(path)
                this = _image_size(data, path, codec)
                if size is None:
                    size = this
                    stream.width, stream.height = size
                    stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "rgb24"
                elif this != size:
                    raise ReconstructError(f"frame {path} is {this[0]}x{this[1]}, the first frame is "
                                           f"{size[0]}x{size[1]}")
                packet = av.Packet(data)
                packet.pts = packet.dts = number - first
                packet.time_base = 1 / rate
                packet.stream = stream
                packet.is_keyframe = True
                container.mux(packet)
                if on_frame is not None:
                    on_frame()
    except (ReconstructError, DataError):
        raise
    except av.FFmpegError as exc:  # the muxer refused a packet or the file: name the video, not a traceback
        raise ReconstructError(f"cannot write {out.name} from the frames in {frames[0][1].parent} "
                               f"({type(exc).__name__}: {exc})") from None
    span = frames[-1][0] - first + 1
    return {"frames": len(frames), "gaps": span - len(frames), "codec": codec, "fps": float(rate),
            "first_number": first, "size": list(size)}


# ------------------------------------------------------------------ placing one video

def _partial_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{_PARTIAL}")


def _clear_stale_partials(target: Path) -> None:
    """Temporary files of an earlier, interrupted run for this target (ours by their name)."""
    with contextlib.suppress(OSError):
        for p in target.parent.glob(f".{glob_escape(target.name)}.*{_PARTIAL}"):
            with contextlib.suppress(OSError):
                p.unlink()


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _place(root: Path, video_path: str, write: Callable[[Path], None]) -> Path:
    """Run ``write(temporary path)`` and rename the result to ``video_path`` under ``root``.

    Containment is checked before the target's folders are made and again after, so a folder that is
    (or became) a symlink out of the root stops the write.
    """
    target = resolve_video_path(root, video_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = resolve_video_path(root, video_path)
    _clear_stale_partials(target)
    tmp = _partial_path(target)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _link_method(mode: str, src: Path, root: Path) -> str:
    inside = src.resolve().is_relative_to(root.resolve())
    if mode == "copy":
        return "copy"
    if mode == "symlink" and not inside:
        raise ReconstructError(f"{src} lies outside the video root {root}: a symlink to it would be refused by every "
                               "run (no video pointer may lead out of the root); use hard links (the default), move "
                               "the download under the root, or pass --copy")
    if mode == "symlink" or (mode == "auto" and inside):
        return "symlink"
    return "hardlink"


def materialize(root: Path, video_path: str, cand: Candidate, *, mode: str, extract: bool, fps: float | None,
                 progress: bool) -> tuple[str, dict]:
    """Place one video from ``cand``; ``(action, details)``. ReconstructError when it cannot be done.

    Checked again here, just before it is used: a copy that is (or became) a symlink out of its download
    folder is refused, whatever the mode -- a hard link to it would tie the root to a file nobody asked for.
    """
    why = outside_download(cand.path, cand.download) if cand.download is not None else None
    if why is not None:
        raise ReconstructError(f"{cand.describe()} is {why}: not used (pass --from the folder it lies in)")
    if cand.kind == "zip":
        if not extract:
            raise ReconstructError(f"found only inside the archive {cand.path} ({cand.member}): unzip it, or rerun "
                                   "with --extract to extract this video into the root")

        def write(tmp: Path) -> None:
            try:
                with zipfile.ZipFile(cand.path) as z, z.open(cand.member) as src, open(tmp, "xb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except (zipfile.BadZipFile, EOFError, RuntimeError, ValueError, zlib.error) as exc:
                raise ReconstructError(f"cannot extract {cand.member} from {cand.path} ({type(exc).__name__}: "
                                       f"{exc}): download that zip part again") from None

        _place(root, video_path, write)
        return "extract", {}
    if cand.kind == "frames":
        rate = cand.layout.fps or fps
        if not rate:
            raise ReconstructError(f"the frames in {cand.path} have no known frame rate: the data give none for this "
                                   "video")
        frames = frames_of(cand.path, cand.layout)
        from tqdm import tqdm

        info: dict = {}
        with tqdm(total=len(frames), desc=f"assemble {Path(video_path).name}", unit="frame", leave=False,
                  disable=not progress) as bar:
            def write(tmp: Path) -> None:
                info.update(assemble_frames(frames, tmp, rate, on_frame=lambda: bar.update(1)))

            _place(root, video_path, write)
        return "assemble", info
    method = _link_method(mode, cand.path, root)
    src = cand.path.resolve()

    def write(tmp: Path) -> None:
        if method == "copy":
            shutil.copyfile(src, tmp)
        elif method == "symlink":
            os.symlink(os.path.relpath(src, tmp.parent.resolve()), tmp)
        else:
            try:
                os.link(src, tmp)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise ReconstructError(
                        f"cannot hard-link {src} into {root} ({exc.strerror}: another filesystem?). Put the root on "
                        "the download's filesystem, move the download under the root (a relative symlink is then "
                        "used), or pass --copy") from None
                raise

    _place(root, video_path, write)
    return method, {}


def same_content(target: Path, cand: Candidate) -> bool:
    """Whether the file at ``target`` holds exactly the bytes of the upstream file ``cand`` (a hard link, a
    symlink to it, or an intact copy of it), by content identity: a damaged copy in the root is told from
    its intact upstream even when its size, times or name agree."""
    if cand.kind != "file":
        return False
    try:
        return file_identity(target) == file_identity(cand.path)
    except OSError:
        return False
