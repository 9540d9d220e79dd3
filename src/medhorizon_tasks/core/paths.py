"""Video-pointer resolution: a path in the data may never leave the video root."""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from .errors import VideoError
from .settings import env_text

VIDEO_ROOT_ENV = "MEDHORIZON_VIDEO_ROOT"


def relative_video_path(relative: str, *, uid: str | None = None) -> PurePosixPath:
    """``relative`` as a path under a video root, refusing what can never be one wherever the root is: an
    empty value, a NUL byte, an absolute path (POSIX or Windows) and ``..`` components (VideoError)."""
    if not isinstance(relative, str) or not relative.strip():
        raise VideoError("field 'video_path' is empty", uid=uid)
    if "\x00" in relative:
        raise VideoError("field 'video_path' contains a NUL byte", uid=uid)
    posix, win = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or win.is_absolute() or win.drive:
        raise VideoError(f"field 'video_path' must be relative to the video root, got absolute path {relative!r}", uid=uid)
    if ".." in posix.parts or ".." in win.parts:
        raise VideoError(f"field 'video_path' escapes the video root with '..': {relative!r}", uid=uid)
    return posix


def resolve_video_path(root: str | os.PathLike, relative: str, *, uid: str | None = None) -> Path:
    """``root/relative``, refusing absolute paths, ``..`` components and symlinks that lead out of ``root``.

    Only containment is checked here; whether the file exists is the decoder's
    business (so that a missing video is reported per item, at decode time).
    """
    posix = relative_video_path(relative, uid=uid)
    try:
        root_real = Path(root).resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13 raises RuntimeError on a symlink loop
        raise VideoError(f"the video root {root} cannot be resolved ({_why(exc)})", uid=uid) from None
    candidate = root_real / posix
    try:
        real = candidate.resolve()
    except (RuntimeError, OSError) as exc:
        raise VideoError(f"field 'video_path' {relative!r} cannot be resolved under the video root {root_real} "
                         f"({_why(exc)})", uid=uid) from None
    try:
        real.relative_to(root_real)
    except ValueError:
        raise VideoError(
            f"field 'video_path' {relative!r} resolves outside the video root {root_real} (symlink to {real})",
            uid=uid) from None
    return candidate


def _why(exc: BaseException) -> str:
    """A symlink loop, said as one (``resolve`` raises RuntimeError for it before Python 3.13, OSError ELOOP
    after), or the OS's reason."""
    if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
        return "a symlink loop"
    return getattr(exc, "strerror", None) or str(exc)


def default_video_root(data_path: str | os.PathLike) -> Path:
    """``$MEDHORIZON_VIDEO_ROOT``, else the folder holding the data (a dataset folder, or the data file's folder)."""
    env = env_text(VIDEO_ROOT_ENV)
    if env:
        return Path(env).expanduser()
    data = Path(data_path).expanduser()
    return data if data.is_dir() else data.parent
