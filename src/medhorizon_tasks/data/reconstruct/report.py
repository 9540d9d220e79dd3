"""What a ``videos check`` / ``videos link`` run found and did, per video and per source: the JSON report and
the message."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ...core.text import plural, valid_unicode
from ..sources import source_named
from .checksums import ChecksumMatch

__all__ = ["VideoReport", "STATE_TEXT", "ReconstructReport"]


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
    checksum: str = ""        # against --checksums: "match" | "differs" | "" (not compared)

    def to_json(self) -> dict:
        d = {"video_path": self.video_path, "source": self.source, "items": list(self.uids), "state": self.state,
             "reason": self.reason, "action": self.action, "upstream": self.upstream, "notes": self.notes}
        if self.sha256 is not None:
            d["sha256"] = self.sha256
        if self.checksum:
            d["checksum"] = self.checksum
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
    checksums: ChecksumMatch | None = None

    @property
    def ok(self) -> bool:
        return all(v.state == "ok" for v in self.videos)

    def checksum_summary(self) -> dict | None:
        """What ``--checksums`` verified: the list, its entries, and how many videos were compared."""
        if self.checksums is None:
            return None
        listed = [v for v in self.videos if v.video_path in self.checksums.wanted]
        return {"file": self.checksums.source, "entries": self.checksums.entries,
                "videos": len(self.videos), "listed": len(listed),
                "verified": sum(v.checksum == "match" for v in listed),
                "differ": [v.video_path for v in listed if v.checksum == "differs"],
                "not_compared": [v.video_path for v in listed if not v.checksum],
                "without_entry": [v.video_path for v in self.videos if v.video_path not in self.checksums.wanted],
                "entries_for_no_video": [e.path for e in self.checksums.unmatched]}

    def _checksum_line(self) -> list[str]:
        s = self.checksum_summary()
        if s is None:
            return []
        parts = [f"checksums ({s['file']}): {s['verified']} of {plural(s['videos'], 'video')} verified"]
        if s["differ"]:
            parts.append(f"{len(s['differ'])} differ")
        if s["not_compared"]:
            parts.append(f"{len(s['not_compared'])} listed but not compared (not usable)")
        if s["without_entry"]:
            parts.append(f"{len(s['without_entry'])} not in the list")
        if s["entries_for_no_video"]:
            parts.append(f"{plural(len(s['entries_for_no_video']), 'entry', 'entries')} name no video of the data")
        return ["; ".join(parts)]

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
                "checksums": self.checksum_summary(), "sources": sources, "items": [v.to_json() for v in self.videos]}

    def message(self, limit: int = 10) -> str:
        lines = [f"videos {self.command}: {sum(v.state == 'ok' for v in self.videos)} of {len(self.videos)} videos "
                 f"usable under {self.root}", *self._checksum_line()]
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
            lines.append("Run `medhorizon-tasks videos link` with the same --video-root and --from to place the videos "
                         "found upstream.")
        return valid_unicode("\n".join(lines))
