"""Checking the videos under the root: the pre-flight every run does, then what only a reconstruction needs
(a decode of the first, middle and last frames, the frame count and rate against the data, SHA-256
checksums)."""

from __future__ import annotations

from pathlib import Path

from ...benchmarks.videos import VideoCheckCache, VideoRef, check_videos
from ...core.errors import VideoError
from ...core.paths import resolve_video_path
from ...core.safeio import sha256_file
from .report import VideoReport

__all__ = ["verify"]


def verify(root: Path, refs: list[VideoRef], reports: dict[str, VideoReport], info: dict, *, cache: VideoCheckCache,
           decode: bool, checksums: dict[str, str] | None, compute_checksums: bool, workers: int,
           progress: bool) -> None:
    """The shared pre-flight on ``refs``, then decoding, frame count / rate and checksum; fills ``reports``.

    ``checksums``: ``{video_path: expected SHA-256}`` (a matched ``--checksums`` list); each video compared
    is marked in its report (``checksum``: ``"match"`` or ``"differs"``), a difference makes it unusable."""
    if not refs:
        return
    problems = {p.video_path: p.reason for p in
                check_videos(root, refs, workers=workers, progress=progress, cache=cache, desc="videos: check")}
    for ref in refs:
        rep = reports[ref.video_path]
        rep.checksum = ""
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
            if want is not None:
                rep.checksum = "match" if want == rep.sha256 else "differs"
            if rep.checksum == "differs":
                rep.state, rep.reason = "unusable", f"SHA-256 {rep.sha256} differs from the expected {want}"
                continue
        rep.state, rep.reason = "ok", ""
    cache.save()


def _decode_error(path: Path, num_frames: int | None) -> str | None:
    """None when the first, middle and last frames decode; else why not."""
    from ...core.sampling import FramePlan
    from ...core.video.decode import decode_plan
    from ...core.video.index_store import stored_index

    n = num_frames or 1
    wanted = sorted({0, n // 2, n - 1})
    try:
        decode_plan(path, FramePlan(tuple(wanted), tuple(float(i) for i in wanted), "reconstruct-check"),
                    max_side=64, workers=1, index=stored_index(path))  # the index the check above stored
    except VideoError as exc:
        return str(exc).split(" (video:")[0]
    return None

