"""One ``videos check`` or ``videos link`` run: every video the data use, checked where it is, looked up
upstream when it is not usable, placed (link only), checked again; ``.medhorizon_videos.json`` in the root
records where each placed video came from."""

from __future__ import annotations

import datetime
import os
from collections import defaultdict
from pathlib import Path

from ...benchmarks.videos import VideoCheckCache, VideoRef, video_refs
from ...core.errors import DataError, MedHorizonError, VideoError
from ...core.paths import resolve_video_path
from ...core.safeio import atomic_write_json, read_json
from ..sources import SOURCES, UpstreamSource, source_for_path, source_named
from .find import UpstreamIndex, scan_upstream
from .place import ReconstructError, materialize, same_file
from .report import ReconstructReport, VideoReport
from .verify import verify

__all__ = ["MODES", "MANIFEST", "reconstruct"]

MODES = ("auto", "hardlink", "symlink", "copy")
MANIFEST = ".medhorizon_videos.json"


# ------------------------------------------------------------------ the data's videos

def _video_info(benchmark: str, data: Path) -> dict[str, tuple[str, float | None, int | None]]:
    """``{video_path: (source name as the data give it, data fps, data frame count)}``."""
    out: dict[str, tuple[str, float | None, int | None]] = {}
    if benchmark == "medhorizon":
        from ...benchmarks.medhorizon.release import load_release

        for it in load_release(data):
            out.setdefault(it.video_path, (it.source, it.fps, it.num_frames))
    elif benchmark == "surghi":
        from ...benchmarks.surghi.frames import read_frame_rows

        for r in read_frame_rows(data, role="items"):
            out.setdefault(r.video_path, (r.dataset, None, None))
    else:
        from ...benchmarks.sureon.items import load_items

        for it in load_items(data):
            out.setdefault(it.video_path, ("", None, None))
    return out


def _source_of(name: str, video_path: str) -> UpstreamSource | None:
    return source_named(name) or source_for_path(video_path)


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
    verify(root, present, reports, info, cache=cache, decode=decode, checksums=checksums,
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
            if same_file(target, cand):
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
            action, details = materialize(root, ref.video_path, cand, mode=mode, extract=extract,
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

    verify(root, placed, reports, info, cache=cache, decode=decode, checksums=checksums,
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
