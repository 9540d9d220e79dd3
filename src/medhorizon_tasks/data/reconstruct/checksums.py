"""``--checksums FILE``: a SHA-256 list, read strictly and matched to the data's videos.

The list is what ``sha256sum`` (``HEX  path``, ``HEX *path``, and its ``\\HEX  path`` form for names with
a backslash or a newline) or ``shasum -a 256 --tag`` (``SHA256 (path) = HEX``) print; ``#`` lines and blank
lines are skipped. Lines end at ``\\n`` only (:func:`~...core.safeio.iter_lines`). A line that is none of
these, or two lines giving one path different digests, is an error naming the lines.

An entry names a video of the data when its path, made relative to the video root, is the video's
``video_path``: a relative path as it is, an absolute path (the root as given or with its symlinks
resolved), a path relative to the list's own folder (``sha256sum`` run where the list lies), or, failing
those, the entry's last components (a list made one or more folders up, ``videos/real_colon/x.mp4``; the
longest ``video_path`` that fits). Two entries naming one video with different digests are an error; a
list none of whose entries names a video of the data verifies nothing and is an error too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...core.errors import DataError, MedHorizonError
from ...core.safeio import iter_lines
from ...core.text import plural, valid_unicode

__all__ = ["ChecksumEntry", "ChecksumList", "ChecksumMatch", "read_checksums", "match_checksums"]

_GNU = re.compile(r"(\\?)([0-9a-fA-F]{64})(?: \*| {1,2}|\t)(.+)")
_TAG = re.compile(r"(\\?)SHA256 \((.+)\) = ([0-9a-fA-F]{64})")


@dataclass(frozen=True)
class ChecksumEntry:
    line: int
    path: str
    sha256: str  # lower-case hex


@dataclass
class ChecksumList:
    """The entries of one list, in file order (``source``: the file, for messages)."""

    source: str
    entries: list[ChecksumEntry]
    base: Path | None = None  # the list's folder: relative paths may be relative to it

    @classmethod
    def from_mapping(cls, sums: Mapping[str, str], source: str = "checksums") -> "ChecksumList":
        """``{path: hex}`` (paths relative to the root) as a list."""
        return cls(source, [ChecksumEntry(0, str(p), str(h).lower()) for p, h in sums.items()])


@dataclass
class ChecksumMatch:
    """The list matched to the data's videos: ``wanted`` ``{video_path: hex}``; entries naming no video."""

    source: str
    entries: int
    wanted: dict[str, str]
    unmatched: list[ChecksumEntry] = field(default_factory=list)


def _unescape(name: str) -> str:
    """The file name of ``sha256sum``'s escaped form (``\\\\`` and ``\\n``)."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), name)


def read_checksums(path: str | os.PathLike) -> ChecksumList:
    """The entries of a SHA-256 list (module doc); DataError naming every bad or conflicting line."""
    entries: list[ChecksumEntry] = []
    first: dict[str, ChecksumEntry] = {}
    problems: list[str] = []
    for n, line in iter_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text = line.strip()
        m = _GNU.fullmatch(text)
        if m:
            escaped, digest, name = m.groups()
        else:
            m = _TAG.fullmatch(text)
            if not m:
                problems.append(f"line {n}: expected '<64 hex digits>  <path>' (sha256sum) or "
                                f"'SHA256 (<path>) = <64 hex digits>', got {valid_unicode(line[:80])!r}")
                continue
            escaped, name, digest = m.groups()
        name = _unescape(name) if escaped else name
        entry = ChecksumEntry(n, _normal(name), digest.lower())
        seen = first.get(entry.path)
        if seen is not None and seen.sha256 != entry.sha256:
            problems.append(f"line {n}: {valid_unicode(entry.path)!r} has another SHA-256 than on line {seen.line} "
                            f"({entry.sha256} vs {seen.sha256}): which one is right?")
            continue
        first.setdefault(entry.path, entry)
        entries.append(entry)
    if problems:
        raise DataError(problems, source=str(path))
    if not entries:
        raise DataError("no checksum in the list: nothing could be verified", source=str(path))
    return ChecksumList(str(path), entries, Path(path).expanduser().absolute().parent)


def _normal(name: str) -> str:
    """A path as the list gives it, with ``/`` separators and without ``./`` components."""
    posix = name.replace("\\", "/")
    parts = [p for p in posix.split("/") if p not in ("", ".")]
    return ("/" if posix.startswith("/") else "") + "/".join(parts)


def _under(path: str, roots: list[Path]) -> str | None:
    real = os.path.normpath(path)
    for r in roots:
        rel = os.path.relpath(real, r) if os.path.isabs(real) else None
        if rel is not None and not rel.startswith(".."):
            return PurePosixPath(Path(rel).as_posix()).as_posix()
    return None


def match_checksums(sums: ChecksumList | Mapping[str, str], root: Path, video_paths: list[str]) -> ChecksumMatch:
    """Match each entry to a ``video_path`` of the data (module doc); MedHorizonError when none matches or
    two entries give one video different digests."""
    if isinstance(sums, Mapping):
        sums = ChecksumList.from_mapping(sums)
    videos = {_normal(vp): vp for vp in video_paths}
    by_parts = sorted(((PurePosixPath(k).parts, vp) for k, vp in videos.items()), key=lambda t: -len(t[0]))
    roots = list(dict.fromkeys([root.expanduser().absolute(), root.expanduser().resolve()]))
    wanted: dict[str, ChecksumEntry] = {}
    unmatched: list[ChecksumEntry] = []
    problems: list[str] = []
    for e in sums.entries:
        vp = videos.get(e.path)
        if vp is None:
            rel = _under(e.path, roots) if e.path.startswith("/") else (
                _under(str(sums.base / e.path), roots) if sums.base is not None else None)
            vp = videos.get(rel) if rel is not None else None
        if vp is None:
            parts = PurePosixPath(e.path).parts
            vp = next((v for p, v in by_parts if len(parts) > len(p) and parts[-len(p):] == p), None)
        if vp is None:
            unmatched.append(e)
            continue
        seen = wanted.get(vp)
        if seen is not None and seen.sha256 != e.sha256:
            problems.append(f"lines {seen.line} and {e.line} ({valid_unicode(seen.path)!r}, {valid_unicode(e.path)!r}) both "
                            f"name the video {vp} and give different SHA-256 digests")
        wanted.setdefault(vp, e)
    if problems:
        raise DataError(problems, source=sums.source)
    if not wanted:
        shown = ", ".join(repr(valid_unicode(e.path)) for e in sums.entries[:3])
        raise MedHorizonError(
            f"--checksums {sums.source}: none of its {plural(len(sums.entries), 'entry')} ({shown}"
            f"{', ...' if len(sums.entries) > 3 else ''}) names a video of the data, so nothing would be "
            f"verified; give paths relative to the video root {root} (as video_path), absolute, or relative to "
            "the list's folder")
    return ChecksumMatch(sums.source, len(sums.entries), {vp: e.sha256 for vp, e in wanted.items()}, unmatched)
