"""Video-pointer resolution: a path in the data may never leave the video root."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from .errors import VideoError

VIDEO_ROOT_ENV = "MEDHORIZON_VIDEO_ROOT"


def resolve_video_path(root: str | os.PathLike, relative: str, *, uid: str | None = None) -> Path:
    """``root/relative``, refusing absolute paths, ``..`` components and symlinks that lead out of ``root``.

    Only containment is checked here; whether the file exists is the decoder's
    business (so that a missing video is reported per item, at decode time).
    """
    if not isinstance(relative, str) or not relative.strip():
        raise VideoError("field 'video_path' is empty", uid=uid)
    if "\x00" in relative:
        raise VideoError("field 'video_path' contains a NUL byte", uid=uid)
    posix, win = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or win.is_absolute() or win.drive:
        raise VideoError(f"field 'video_path' must be relative to the video root, got absolute path {relative!r}", uid=uid)
    if ".." in posix.parts or ".." in win.parts:
        raise VideoError(f"field 'video_path' escapes the video root with '..': {relative!r}", uid=uid)
    root_real = Path(root).resolve()
    candidate = root_real / posix
    real = candidate.resolve()
    try:
        real.relative_to(root_real)
    except ValueError:
        raise VideoError(
            f"field 'video_path' {relative!r} resolves outside the video root {root_real} (symlink to {real})",
            uid=uid) from None
    return candidate


def default_video_root(data_path: str | os.PathLike) -> Path:
    """``$MEDHORIZON_VIDEO_ROOT``, else the folder holding the data (a dataset folder, or the data file's folder)."""
    env = os.environ.get(VIDEO_ROOT_ENV)
    if env:
        return Path(env).expanduser()
    data = Path(data_path).expanduser()
    return data if data.is_dir() else data.parent
