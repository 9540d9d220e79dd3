"""Rebuilding the video root from the upstream downloads: ``videos check`` and ``videos link``.

The release points at videos it cannot redistribute. For every video the data
reference, this module finds the user's upstream copy (by the source's layout
in :mod:`.sources`), places it where ``video_path`` says, and checks it with
the same pre-flight that every lmms-eval and VLMEvalKit run does
(:func:`medhorizon_tasks.runs.preflight.check_videos`: presence, containment,
indexability, duration against the data), plus what only a reconstruction
needs: a decode of the first, middle and last frames, the frame count and
rate against the data, and optionally a SHA-256.

Decisions (the README and the dataset card say the same):

* **Links, not copies.** A video file is hard-linked into the root, or linked
  by a relative symlink when the download already lies inside the root.
  A symlink leaving the root would be refused by every run
  (:func:`medhorizon_tasks.core.paths.resolve_video_path`: no pointer may lead out
  of the video root), so it is never made. Across filesystems a hard link is
  impossible: the user is told to move the download under the root or pass
  ``copy=True`` (``--copy``). A video inside a zip part is extracted only with
  ``extract=True`` (``--extract``).
* **Frames-only sources are assembled, losslessly, once.** REAL-Colon and
  Galar ship JPEG / PNG frames (PitVQA's stand-in frames are PNG at 1 FPS).
  Each frame file becomes one packet, byte for byte, of an intra-only MJPEG /
  PNG track in an MP4 container, timed by its frame number at the source's
  rate (the release's ``fps``, or the layout's own rate): nothing is
  re-encoded, so the pixels are exactly the upstream images, every frame is a
  keyframe (exact random access), a gap in the numbering stays a gap in time,
  and the rest of the package -- the decoder, the frame cache, the native-video
  bridges that hand a file path to a model's own loader -- keeps its one code
  path: a video file read by PyAV. The cost is disk: the assembled file is as
  large as its frames (about 1 TB for all of REAL-Colon; only the videos the
  release uses are assembled), and the frames may be deleted afterwards (the
  file holds the same bytes: ``ffmpeg -i V.mp4 -c copy -f image2 %06d.jpg``
  gives them back). Re-encoding instead (FFV1, H.264 at qp 0) would cost
  hours of CPU and two to three times the JPEGs' size; reading frame folders
  through a second decoder interface would fork every reader of the package.
* **Never outside the root.** Every target is resolved by
  ``resolve_video_path`` (no absolute path, no ``..``, no symlink out of the
  root) before and after its folders are made; upstream names (zip members,
  frame files) never become target paths. Writes go to a temporary file in
  the target's folder, renamed into place, so an interrupted run leaves no
  half video.
* **Reruns resume.** A target that is present and passes the check is kept
  (the check is cached by file identity, so this costs a ``stat``); only
  missing or, with ``force=True``, failing videos are (re)made.
  ``.medhorizon_videos.json`` in the root records where each placed video came from.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fnmatch
import io
import os
import re
import secrets
import shutil
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

from ..core.errors import DataError, MedHorizonError, VideoError
from ..core.paths import resolve_video_path
from ..runs.preflight import VideoCheckCache, VideoRef, check_videos, video_refs
from ..core.safeio import atomic_write_json, read_bytes, read_json, read_text, sha256_file
from ..core.text import plural
from .sources import SOURCES, Layout, UpstreamSource, source_for_path, source_named, target_id

__all__ = ["MODES", "MANIFEST", "Candidate", "UpstreamIndex", "scan_upstream", "frames_of", "assemble_frames",
           "VideoReport", "ReconstructReport", "reconstruct", "read_checksums", "ReconstructError"]

MODES = ("auto", "hardlink", "symlink", "copy")
MANIFEST = ".medhorizon_videos.json"
_ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z", ".rar")
_PARTIAL = ".partial"


class ReconstructError(MedHorizonError):
    """One video could not be placed (a damaged frame, a link across filesystems ...); the run goes on."""


# ------------------------------------------------------------------ finding upstream copies

@dataclass(frozen=True)
class Candidate:
    """An upstream copy of one video: a file, a zip member, or a folder of frames."""

    kind: str        # "file" | "zip" | "frames"
    path: Path       # the file, the zip archive, or the frames folder
    layout: Layout
    member: str = ""

    def describe(self) -> str:
        if self.kind == "zip":
            return f"{self.member} in {self.path}"
        return f"frames in {self.path}" if self.kind == "frames" else str(self.path)


@dataclass
class UpstreamIndex:
    """What a walk of the user's download folders found, for the sources asked."""

    found: dict[tuple[str, int, str], list[Candidate]] = field(default_factory=lambda: defaultdict(list))
    archives: list[Path] = field(default_factory=list)   # archives that are not (or cannot be) looked into
    roots: dict[str, list[Path]] = field(default_factory=lambda: defaultdict(list))

    def lookup(self, source: UpstreamSource, video_path: str) -> list[Candidate]:
        """Candidates for one release video, best layout first (the source's order)."""
        out: list[Candidate] = []
        for i, layout in enumerate(source.layouts):
            out.extend(self.found.get((source.name, i, target_id(source, video_path, layout)), []))
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
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            path = Path(e.path)
            if is_dir:
                pruned = False
                for s in sources:
                    for i, layout in enumerate(s.layouts):
                        if layout.kind != "frames":
                            continue
                        vid = layout.match_name(e.name)
                        if vid is not None and _first_frame(path, layout):
                            index.found[(s.name, i, vid)].append(Candidate("frames", path, layout))
                            pruned = True
                if not pruned:
                    stack.append(path)
                continue
            if e.name.lower().endswith(".zip"):
                _index_zip(path, sources, index)
            elif _is_archive(e.name):
                index.archives.append(path)
            for s in sources:
                for i, layout in enumerate(s.layouts):
                    if layout.kind == "video":
                        vid = layout.match_name(e.name)
                        if vid is not None:
                            index.found[(s.name, i, vid)].append(Candidate("file", path, layout))


def _index_zip(path: Path, sources: list[UpstreamSource], index: UpstreamIndex) -> None:
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
                        index.found[(s.name, i, vid)].append(Candidate("zip", path, layout, m.filename))


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


# ------------------------------------------------------------------ reports

@dataclass
class VideoReport:
    """One referenced video: what was done and what state it is in."""

    video_path: str
    source: str
    uids: tuple[str, ...]
    state: str = "unchecked"  # ok | missing | found | archived | unusable | failed | unsafe
    reason: str = ""
    action: str = ""          # hardlink | symlink | copy | extract | assemble | kept | ""
    upstream: str = ""
    notes: list[str] = field(default_factory=list)
    sha256: str | None = None

    def to_json(self) -> dict:
        d = {"video_path": self.video_path, "source": self.source, "items": list(self.uids), "state": self.state,
             "reason": self.reason, "action": self.action, "upstream": self.upstream, "notes": self.notes}
        if self.sha256 is not None:
            d["sha256"] = self.sha256
        return d


STATE_TEXT = {
    "ok": "ok", "missing": "missing", "found": "found upstream, not linked yet", "archived": "only inside an archive",
    "unusable": "present but unusable", "failed": "could not be placed", "unsafe": "unsafe path",
}


@dataclass
class ReconstructReport:
    command: str            # "check" | "link"
    benchmark: str
    data: str
    root: str
    videos: list[VideoReport]
    archives: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(v.state == "ok" for v in self.videos)

    def by_source(self) -> dict[str, list[VideoReport]]:
        out: dict[str, list[VideoReport]] = defaultdict(list)
        for v in self.videos:
            out[v.source or "unknown source"].append(v)
        return dict(sorted(out.items()))

    def to_json(self) -> dict:
        sources = {}
        for name, vids in self.by_source().items():
            src = source_named(name)
            counts: dict[str, int] = defaultdict(int)
            for v in vids:
                counts[v.state] += 1
            sources[name] = {
                "videos": len(vids), "states": dict(counts),
                "not_ok": [v.video_path for v in vids if v.state != "ok"],
                "licence": src.licence if src else None, "shape": src.shape if src else None,
                "how_to_get": src.how_to_get() if src else None,
                "archives_not_unpacked": self.archives.get(name, []),
            }
        return {"command": self.command, "benchmark": self.benchmark, "data": self.data, "root": self.root,
                "ok": self.ok, "videos": len(self.videos), "usable": sum(v.state == "ok" for v in self.videos),
                "sources": sources, "items": [v.to_json() for v in self.videos]}

    def message(self, limit: int = 10) -> str:
        lines = [f"videos {self.command}: {sum(v.state == 'ok' for v in self.videos)} of {len(self.videos)} videos "
                 f"usable under {self.root}"]
        for name, vids in self.by_source().items():
            src = source_named(name)
            counts: dict[str, int] = defaultdict(int)
            for v in vids:
                counts[v.state] += 1
            actions: dict[str, int] = defaultdict(int)
            for v in vids:
                if v.action and v.action != "kept":
                    actions[v.action] += 1
            head = f"{name}" + (f" ({src.licence}; {src.shape})" if src else "")
            summary = ", ".join(f"{n} {STATE_TEXT[s]}" for s, n in sorted(counts.items()))
            done = (" -- placed now: " + ", ".join(f"{n} by {a}" for a, n in sorted(actions.items()))) if actions else ""
            lines.append(f"{head}: {plural(len(vids), 'video')}: {summary}{done}")
            bad = [v for v in vids if v.state != "ok"]
            for v in bad[:limit]:
                items = ", ".join(v.uids[:3]) + (f", ... {len(v.uids)} in all" if len(v.uids) > 3 else "")
                lines.append(f"  - {v.video_path} (items {items}): {STATE_TEXT[v.state]}: {v.reason}")
            if len(bad) > limit:
                lines.append(f"  ... and {len(bad) - limit} more (--json lists all)")
            for v in vids:
                for note in v.notes:
                    lines.append(f"  note: {v.video_path}: {note}")
            if any(v.state in ("missing", "archived", "failed") for v in bad) and src is not None:
                lines.append(f"  how to get it: {src.how_to_get()}")
                for a in self.archives.get(name, []):
                    lines.append(f"  archive not unpacked: {a}")
        if not self.ok and self.command == "check" and any(v.state == "found" for v in self.videos):
            lines.append("Run `medhorizon-tasks videos link` with the same --root and --from to place the videos "
                         "found upstream.")
        return "\n".join(lines)


# ------------------------------------------------------------------ the data's videos

def _video_info(benchmark: str, data: Path) -> dict[str, tuple[str, float | None, int | None]]:
    """``{video_path: (source name as the data give it, data fps, data frame count)}``."""
    out: dict[str, tuple[str, float | None, int | None]] = {}
    if benchmark == "medhorizon":
        from ..benchmarks.medhorizon.release import load_release

        for it in load_release(data):
            out.setdefault(it.video_path, (it.source, it.fps, it.num_frames))
    elif benchmark == "surghi":
        from ..benchmarks.surghi.frames import read_frame_rows

        for r in read_frame_rows(data, role="items"):
            out.setdefault(r.video_path, (r.dataset, None, None))
    else:
        from ..benchmarks.sureon.items import load_items

        for it in load_items(data):
            out.setdefault(it.video_path, ("", None, None))
    return out


def _source_of(name: str, video_path: str) -> UpstreamSource | None:
    return source_named(name) or source_for_path(video_path)


def read_checksums(path: str | os.PathLike) -> dict[str, str]:
    """``sha256sum`` output (``HEX  video_path`` per line, paths relative to the root) -> ``{path: hex}``."""
    out: dict[str, str] = {}
    problems = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.fullmatch(r"\s*([0-9a-fA-F]{64})\s+\*?(.+?)\s*", line)
        if not m:
            problems.append(f"line {n}: expected '<64 hex digits>  <video_path>', got {line[:80]!r}")
            continue
        out[m.group(2).replace("\\", "/").removeprefix("./")] = m.group(1).lower()
    if problems:
        raise DataError(problems, source=str(path))
    return out



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


def _materialize(root: Path, video_path: str, cand: Candidate, *, mode: str, extract: bool, fps: float | None,
                 progress: bool) -> tuple[str, dict]:
    """Place one video from ``cand``; ``(action, details)``. ReconstructError when it cannot be done."""
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


def _same_file(target: Path, cand: Candidate) -> bool:
    """Whether ``target`` already is ``cand`` (the same inode, or a symlink to it): the cheap identity check."""
    if cand.kind != "file":
        return False
    try:
        return os.path.samefile(target, cand.path)
    except OSError:
        return False


# ------------------------------------------------------------------ checking

def _check(root: Path, refs: list[VideoRef], reports: dict[str, VideoReport], info: dict, *, cache: VideoCheckCache,
           decode: bool, checksums: dict[str, str] | None, compute_checksums: bool, workers: int,
           progress: bool) -> None:
    """The shared pre-flight on ``refs``, then decoding, frame count / rate and checksum; fills ``reports``."""
    if not refs:
        return
    problems = {p.video_path: p.reason for p in
                check_videos(root, refs, workers=workers, progress=progress, cache=cache, desc="videos: check")}
    for ref in refs:
        rep = reports[ref.video_path]
        reason = problems.get(ref.video_path)
        if reason is not None:
            rep.state = "missing" if "not found" in reason else "unusable"
            rep.reason = reason
            continue
        path = resolve_video_path(root, ref.video_path)
        identity = VideoCheckCache.identity(path)
        measured = cache.get(identity) or {}
        _, data_fps, data_frames = info.get(ref.video_path, ("", None, None))
        n, dur = measured.get("num_frames"), measured.get("duration_s")
        if data_frames and n and dur and n != data_frames:
            rep.notes.append(f"the file has {n} frames ({n / dur:.3g} fps), the data say {data_frames} at "
                             f"{data_fps:g} fps: accepted, the durations agree and frames are looked up by time")
        if decode:
            key = f"decode|{identity}"
            hit = cache.get(key)
            if hit is None:
                hit = {"error": _decode_error(path, n)}
                cache.put(key, hit)
            if hit.get("error"):
                rep.state, rep.reason = "unusable", f"decoding fails: {hit['error']}"
                continue
        want = (checksums or {}).get(ref.video_path)
        if want is not None or compute_checksums:
            key = f"sha256|{identity}"
            hit = cache.get(key)
            if hit is None:
                hit = {"sha256": sha256_file(path)}
                cache.put(key, hit)
            rep.sha256 = hit["sha256"]
            if want is not None and want != rep.sha256:
                rep.state, rep.reason = "unusable", f"SHA-256 {rep.sha256} differs from the expected {want}"
                continue
        rep.state, rep.reason = "ok", ""
    cache.save()


def _decode_error(path: Path, num_frames: int | None) -> str | None:
    """None when the first, middle and last frames decode; else why not."""
    from ..core.sampling import FramePlan
    from ..core.video.decode import decode_plan

    n = num_frames or 1
    wanted = sorted({0, n // 2, n - 1})
    try:
        decode_plan(path, FramePlan(tuple(wanted), tuple(float(i) for i in wanted), "reconstruct-check"),
                    max_side=64, workers=1)
    except VideoError as exc:
        return str(exc).split(" (video:")[0]
    return None


# ------------------------------------------------------------------ the command

def _manifest(root: Path) -> dict:
    path = root / MANIFEST
    try:
        value = read_json(path) if path.is_file() else {}
    except DataError:
        value = {}
    return value if isinstance(value, dict) else {}


def reconstruct(benchmark: str, data: str | os.PathLike, root: str | os.PathLike,
                upstream: dict[str | None, list[str | os.PathLike]] | None = None, *, write: bool = False,
                mode: str = "auto", extract: bool = False, force: bool = False, decode: bool = True,
                checksums: dict[str, str] | None = None, compute_checksums: bool = False, workers: int = 4,
                progress: bool = True, cache: VideoCheckCache | None = None) -> ReconstructReport:
    """Check (``write=False``: ``videos check``) or place and check (``videos link``) every video the data use.

    ``upstream``: ``{source name: [download folders]}``; the key ``None`` means "any source" (one folder
    holding several downloads). MedHorizonError for unusable arguments or data (nothing is written then);
    every per-video problem is in the report instead.
    """
    if mode not in MODES:
        raise MedHorizonError(f"unknown link mode {mode!r} (expected one of {', '.join(MODES)})")
    data = Path(data).expanduser()
    root = Path(root).expanduser()
    roots: dict[str, list[Path]] = defaultdict(list)
    for name, paths in (upstream or {}).items():
        if name is None:
            targets = [s.name for s in SOURCES]
        else:
            src = source_named(name)
            if src is None:
                raise MedHorizonError(f"unknown source {name!r} in --from (known: "
                                      f"{', '.join(s.name for s in SOURCES)})")
            targets = [src.name]
        for p in paths:
            if not Path(p).expanduser().is_dir():
                raise MedHorizonError(f"--from {name + '=' if name else ''}{p}: not a folder")
            for t in targets:
                roots[t].append(Path(p).expanduser())
    _, refs = video_refs(benchmark, data)
    info = _video_info(benchmark, data)
    if write:
        root.mkdir(parents=True, exist_ok=True)
    if root.exists() and not root.is_dir():
        raise MedHorizonError(f"the video root {root} is not a folder")
    cache = cache if cache is not None else VideoCheckCache()
    reports: dict[str, VideoReport] = {}
    safe: list[VideoRef] = []
    for ref in refs:
        name = info.get(ref.video_path, ("",))[0]
        src = _source_of(name, ref.video_path)
        rep = reports[ref.video_path] = VideoReport(ref.video_path, src.name if src else name, ref.uids)
        try:
            resolve_video_path(root, ref.video_path)
        except VideoError as exc:
            rep.state, rep.reason = "unsafe", str(exc)
            continue
        safe.append(ref)

    present = [r for r in safe if os.path.lexists(resolve_video_path(root, r.video_path))]
    _check(root, present, reports, info, cache=cache, decode=decode, checksums=checksums,
           compute_checksums=compute_checksums, workers=workers, progress=progress)
    for r in present:
        if reports[r.video_path].state == "ok":
            reports[r.video_path].action = "kept"

    index = scan_upstream(roots) if roots else UpstreamIndex()
    todo = [r for r in safe if reports[r.video_path].state != "ok"]
    placed: list[VideoRef] = []
    manifest = _manifest(root)  # read-only unless write: it also says where a failing file was placed from
    from tqdm import tqdm

    for ref in tqdm(todo, desc="videos: link" if write else "videos: look upstream", unit="video", leave=False,
                    disable=not progress or not todo):
        rep = reports[ref.video_path]
        src = source_named(rep.source)
        cands = index.lookup(src, ref.video_path) if src is not None and src.name in roots else []
        if not cands:
            if rep.state == "unchecked" or rep.state == "missing":
                rep.state = "missing"
                if src is None:
                    rep.reason = "no upstream source is known for this video (its dataset name and folder match none)"
                elif src.name not in roots:
                    rep.reason = f"not under the root, and no download of {src.name} was given (--from)"
                else:
                    where = ", ".join(map(str, roots[src.name]))
                    expected = "; ".join(layout.note for layout in src.layouts if layout.note)
                    rep.reason = f"not under the root, and not found in {where} (looked for: {expected})"
            continue
        cand = cands[0]
        if len({c.describe() for c in cands}) > 1:
            rep.notes.append(f"{len(cands)} upstream copies match; using {cand.describe()}")
        target = resolve_video_path(root, ref.video_path)
        if rep.state == "unusable":
            if _same_file(target, cand):
                rep.reason += f" (the upstream copy {cand.path} itself is affected: fetch it again)"
                continue
            placed_from = manifest.get(ref.video_path)
            if isinstance(placed_from, dict) and placed_from.get("from") == cand.describe():
                rep.reason += (f" (placed earlier from {cand.describe()}: that copy itself is affected; fetch it "
                               f"again, then rerun with --force)")
                continue
            if not force:
                rep.reason += f"; an upstream copy exists ({cand.describe()}): rerun with --force to replace the file"
                continue
        if not write:
            rep.state = "archived" if cand.kind == "zip" else "found"
            rep.reason = f"upstream copy: {cand.describe()}"
            rep.upstream = cand.describe()
            continue
        try:
            action, details = _materialize(root, ref.video_path, cand, mode=mode, extract=extract,
                                           fps=info.get(ref.video_path, ("", None))[1], progress=progress)
        except (ReconstructError, VideoError, DataError) as exc:
            rep.state = "archived" if cand.kind == "zip" and not extract else "failed"
            rep.reason = str(exc)
            rep.upstream = cand.describe()
            continue
        except OSError as exc:
            rep.state, rep.reason = "failed", f"cannot write {ref.video_path}: {exc.strerror or exc}"
            continue
        rep.action, rep.upstream, rep.state, rep.reason = action, cand.describe(), "unchecked", ""
        if details.get("gaps"):
            rep.notes.append(f"{details['gaps']} frame number(s) missing upstream: their time is kept as a gap")
        manifest[ref.video_path] = {"source": rep.source, "how": action, "from": cand.describe(),
                                    "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                                    **({"frames": details} if details else {})}
        atomic_write_json(root / MANIFEST, manifest)
        placed.append(ref)

    _check(root, placed, reports, info, cache=cache, decode=decode, checksums=checksums,
           compute_checksums=compute_checksums, workers=workers, progress=progress)
    for ref in placed:
        rep = reports[ref.video_path]
        if rep.state != "ok":
            rep.reason += f" (placed from {rep.upstream}: that copy itself is affected; fetch it again)"
    archives = {}
    for name in {r.source for r in reports.values()}:
        src = source_named(name)
        if src is not None and any(r.state in ("missing", "archived") for r in reports.values() if r.source == name):
            found = index.archives_of(src)
            if found:
                archives[name] = [str(a) for a in found]
    return ReconstructReport("link" if write else "check", benchmark, str(data), str(root),
                             [reports[r.video_path] for r in refs], archives)
