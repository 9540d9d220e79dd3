"""One ``videos check`` or ``videos link`` run: every video the data use, checked where it is, looked up
upstream when it is not usable, placed (link only), checked again; ``.medhorizon_videos.json`` in the root
records where each placed video came from."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from ...benchmarks.videos import VideoCheckCache, VideoRef, video_refs
from ...core.errors import DataError, MedHorizonError, VideoError
from ...core.file_identity import file_identity, same_file
from ...core.paths import resolve_video_path
from ..sources import SOURCES, UpstreamSource, source_for_path, source_named
from .checksums import ChecksumList, match_checksums
from .find import Candidate, UpstreamIndex, scan_upstream
from .manifest import MANIFEST, read_manifest, record_placed
from .place import ReconstructError, materialize, same_content
from .report import ReconstructReport, VideoReport
from .verify import verify

__all__ = ["MODES", "MANIFEST", "reconstruct"]

MODES = ("auto", "hardlink", "symlink", "copy")


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

def _not_replaced(rep: VideoReport, target: Path, cand: Candidate, force: bool, manifest: dict) -> bool:
    """For a present video that fails the check, with an upstream copy: say whose fault it is, and whether it
    stays (True) or is made again from the upstream copy (``force``). Files are compared by content identity,
    never by name, size or times: a video file with its upstream copy; a file this package made (frames
    assembled, a zip member extracted) with the identity the manifest recorded when it was made."""
    if cand.kind == "file":
        if same_content(target, cand):
            rep.reason += (f" (the upstream copy {cand.describe()} holds the same bytes: it is affected itself; "
                           "fetch it again)")
            return True
        if not force:
            rep.reason += (f"; the upstream copy {cand.describe()} holds other bytes than the file in the root: rerun "
                           "with --force to replace the root's copy with it")
        return not force
    placed = manifest.get(rep.video_path)
    made = isinstance(placed, dict) and placed.get("from") == cand.describe()
    if made and same_file(target, placed.get("identity")):
        rep.reason += (f" (made from {cand.describe()} and unchanged since: that copy itself is affected; fetch it "
                       "again, then rerun with --force to make the file again)")
    elif not force:
        rep.reason += (f"; an upstream copy exists ({cand.describe()}): rerun with --force to make the file again "
                       "from it")
    return not force


def reconstruct(benchmark: str, data: str | os.PathLike, root: str | os.PathLike,
                upstream: dict[str | None, list[str | os.PathLike]] | None = None, *, write: bool = False,
                mode: str = "auto", extract: bool = False, force: bool = False, decode: bool = True,
                checksums: ChecksumList | Mapping[str, str] | None = None, compute_checksums: bool = False,
                workers: int = 4, progress: bool = True, cache: VideoCheckCache | None = None) -> ReconstructReport:
    """Check (``write=False``: ``videos check``) or place and check (``videos link``) every video the data use.

    ``upstream``: ``{source name: [download folders]}``; the key ``None`` means "any source" (one folder
    holding several downloads). ``checksums``: a ``--checksums`` list (:mod:`.checksums`), matched to the
    data's videos first (MedHorizonError when it names none). MedHorizonError for unusable arguments or data
    (nothing is written then); every per-video problem is in the report instead.
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
    matched = match_checksums(checksums, root, [r.video_path for r in refs]) if checksums is not None else None
    wanted = matched.wanted if matched is not None else None
    if os.path.lexists(root) and not root.is_dir():
        raise MedHorizonError(f"the video root {root} is not a folder" +
                              (" (a symlink that leads nowhere, or loops)" if root.is_symlink() else ""))
    # read before anything is written: a manifest that cannot be read stops a link here
    manifest = read_manifest(root, strict=write) if root.is_dir() else {}
    if write:
        root.mkdir(parents=True, exist_ok=True)
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
    verify(root, present, reports, info, cache=cache, decode=decode, checksums=wanted,
           compute_checksums=compute_checksums, workers=workers, progress=progress)
    for r in present:
        if reports[r.video_path].state == "ok":
            reports[r.video_path].action = "kept"

    index = scan_upstream(roots) if roots else UpstreamIndex()
    todo = [r for r in safe if reports[r.video_path].state != "ok"]
    placed: list[VideoRef] = []
    from tqdm import tqdm

    for ref in tqdm(todo, desc="videos: link" if write else "videos: look upstream", unit="video", leave=False,
                    disable=not progress or not todo):
        rep = reports[ref.video_path]
        src = source_named(rep.source)
        cands = index.lookup(src, ref.video_path) if src is not None and src.name in roots else []
        if not cands:
            if rep.state == "unchecked" or rep.state == "missing":
                rep.state = "missing"
                refused = index.refused_for(src, ref.video_path) if src is not None else []
                if refused:
                    rep.reason = f"not under the root; upstream only as {'; '.join(refused)}"
                elif src is None:
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
        if rep.state == "unusable" and _not_replaced(rep, target, cand, force, manifest):
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
        made = {"identity": file_identity(target)} if cand.kind != "file" else {}  # see _not_replaced
        record_placed(root, ref.video_path, {"source": rep.source, "how": action, "from": cand.describe(), **made,
                                             **({"frames": details} if details else {})})
        placed.append(ref)

    verify(root, placed, reports, info, cache=cache, decode=decode, checksums=wanted,
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
                             [reports[r.video_path] for r in refs], archives, matched)
