"""Finding the user's upstream copies of the data's videos, by each source's layout (:mod:`..sources`): video
files, members of zip archives, and folders of frames.

Only what lies inside a download folder is a copy: a symlink whose target is outside it (a file or a
folder) is never followed, so nothing outside the folders the user named is ever linked into the root or
read, and a symlink loop is reported, not walked. Both are kept (:attr:`UpstreamIndex.refused`) so that a
video found only as such an entry is reported as that, not as missing."""

from __future__ import annotations

import errno
import fnmatch
import os
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...core.text import valid_unicode
from ..sources import Layout, UpstreamSource, source_named, target_id

__all__ = ["Candidate", "UpstreamIndex", "scan_upstream", "outside_download"]

_ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z", ".rar")


@dataclass(frozen=True)
class Candidate:
    """An upstream copy of one video: a file, a zip member, or a folder of frames."""

    kind: str        # "file" | "zip" | "frames"
    path: Path       # the file, the zip archive, or the frames folder
    layout: Layout
    member: str = ""
    download: Path | None = None  # the download folder (--from) it was found in

    def describe(self) -> str:
        """Where it is, as valid_unicode text (a name that is not UTF-8 shows its bytes as ``\\xNN``)."""
        if self.kind == "zip":
            return valid_unicode(f"{self.member} in {self.path}")
        return valid_unicode(f"frames in {self.path}" if self.kind == "frames" else str(self.path))


def outside_download(path: Path, download: Path) -> str | None:
    """Why ``path`` (found in the download folder ``download``) is not a copy to use -- a symlink loop, or a
    symlink that leads out of the folder -- else None."""
    try:
        real = path.resolve(strict=True)
        top = download.resolve(strict=True)
    except RuntimeError:  # Python < 3.13: a symlink loop
        return "a symlink loop"
    except OSError as exc:
        return "a symlink loop" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror or exc})"
    if not real.is_relative_to(top):
        return f"a symlink to {valid_unicode(real)}, outside the download folder {valid_unicode(download)}"
    return None


@dataclass
class UpstreamIndex:
    """What a walk of the user's download folders found, for the sources asked."""

    found: dict[tuple[str, int, str], list[Candidate]] = field(default_factory=lambda: defaultdict(list))
    archives: list[Path] = field(default_factory=list)   # archives that are not (or cannot be) looked into
    roots: dict[str, list[Path]] = field(default_factory=lambda: defaultdict(list))
    #: entries named like a video (or a frames folder) that are not used, and why: "PATH: a symlink loop"
    refused: dict[tuple[str, int, str], list[str]] = field(default_factory=lambda: defaultdict(list))

    def lookup(self, source: UpstreamSource, video_path: str) -> list[Candidate]:
        """Candidates for one release video, best layout first (the source's order)."""
        return self._of(self.found, source, video_path)

    def refused_for(self, source: UpstreamSource, video_path: str) -> list[str]:
        """Entries that are named like this video's copy but were not used (a loop, a symlink out)."""
        return self._of(self.refused, source, video_path)

    @staticmethod
    def _of(table: dict, source: UpstreamSource, video_path: str) -> list:
        out: list = []
        for i, layout in enumerate(source.layouts):
            out.extend(table.get((source.name, i, target_id(source, video_path, layout)), []))
        return out

    def archives_of(self, source: UpstreamSource) -> list[Path]:
        roots = [r.resolve() for r in self.roots.get(source.name, [])]
        return [a for a in self.archives
                if any(a.resolve().is_relative_to(r) for r in roots)
                and any(fnmatch.fnmatch(a.name.lower(), g.lower()) for g in source.archives)]


def _is_archive(name: str) -> bool:
    return name.lower().endswith(_ARCHIVE_SUFFIXES)


def _first_frame(folder: Path, layout: Layout) -> bool:
    """Whether ``folder`` holds at least one frame file of ``layout`` (stops at the first)."""
    try:
        with os.scandir(folder) as it:
            return any(layout.frame_number(e.name) is not None and e.is_file() for e in it)
    except OSError:
        return False


def scan_upstream(roots: dict[str, list[Path]]) -> UpstreamIndex:
    """Walk each source's download folders once (``{source name: [folders]}``) and index what they hold.

    A folder that matches a frames layout and holds frames is not walked into (it may hold a million
    frames); symlinked folders are followed once each. Zip archives are indexed by their members' names.
    """
    index = UpstreamIndex()
    by_root: dict[Path, list[UpstreamSource]] = defaultdict(list)
    for name, paths in roots.items():
        source = source_named(name)
        for p in paths:
            by_root[Path(p).expanduser()].append(source)
            index.roots[source.name].append(Path(p).expanduser())
    for root, sources in by_root.items():
        _walk(root, sources, index)
    return index


def _walk(root: Path, sources: list[UpstreamSource], index: UpstreamIndex) -> None:
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = folder.stat()
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            path = Path(e.path)
            try:
                link = e.is_symlink()
            except OSError:
                link = False
            why = outside_download(path, root) if link else None
            if why is not None:
                _refuse(path, e.name, why, sources, index)
                continue
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            if is_dir:
                pruned = False
                for s in sources:
                    for i, layout in enumerate(s.layouts):
                        if layout.kind != "frames":
                            continue
                        vid = layout.match_name(e.name)
                        if vid is not None and _first_frame(path, layout):
                            index.found[(s.name, i, vid)].append(Candidate("frames", path, layout, download=root))
                            pruned = True
                if not pruned:
                    stack.append(path)
                continue
            if e.name.lower().endswith(".zip"):
                _index_zip(path, root, sources, index)
            elif _is_archive(e.name):
                index.archives.append(path)
            for s in sources:
                for i, layout in enumerate(s.layouts):
                    if layout.kind == "video":
                        vid = layout.match_name(e.name)
                        if vid is not None:
                            index.found[(s.name, i, vid)].append(Candidate("file", path, layout, download=root))


def _refuse(path: Path, name: str, why: str, sources: list[UpstreamSource], index: UpstreamIndex) -> None:
    """Keep a refused entry under every video id its name would give (a file or a frames folder)."""
    for s in sources:
        for i, layout in enumerate(s.layouts):
            vid = layout.match_name(name)
            if vid is not None:
                index.refused[(s.name, i, vid)].append(f"{valid_unicode(path)}: {why}")


def _index_zip(path: Path, root: Path, sources: list[UpstreamSource], index: UpstreamIndex) -> None:
    try:
        with zipfile.ZipFile(path) as z:
            members = [m for m in z.infolist() if not m.is_dir()]
    except (OSError, zipfile.BadZipFile, ValueError):
        index.archives.append(path)  # reported as an archive to unpack by hand
        return
    index.archives.append(path)
    for m in members:
        base = m.filename.replace("\\", "/").rsplit("/", 1)[-1]
        for s in sources:
            for i, layout in enumerate(s.layouts):
                if layout.kind == "video":
                    vid = layout.match_name(base)
                    if vid is not None:
                        index.found[(s.name, i, vid)].append(Candidate("zip", path, layout, m.filename, download=root))
