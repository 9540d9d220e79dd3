"""A loaded MedHorizon release against the published counts, and the oracle's fall-back items.

The paper states what the released evaluation split holds (seed
``medhorizon.txt``): 1,253 questions over 340 videos (abstract, section 3,
Table 3: "340 videos; 759 decoded hours; 1,253 QA items"); per task "PR 517,
SD 112, RL 60, BPQ 39, LLS 39, Site 47, Hist 47, Size 47, IR 235, WR 26, RSR
26, CPR 26, and LA 32" (appendix 6.3, "Task-count imbalance"); "A: 309, B:
303, C: 319, D: 322" (appendix 6.3, "Audit statistics"); per source
"AutoLaparo 44, Galar 60, GraSP 112, MultiBypass 403, PitVQA 13, REAL-Colon
251, TMVP 340, and US-Study 30" items (appendix 6.3) over 20, 44, 13, 125, 10,
39, 59 and 30 videos (Table 4).

:func:`check_release` compares a loaded release with these numbers and names
each difference. A partial download is allowed -- a run on a subset is a run --
but it is said: a subset (every count at or below the published one) is
reported as such, anything else as a release that differs from the paper's.

It also names the items the oracle mode cannot show evidence for. An item with
no evidence windows falls back to the 1 FPS + cap rule in oracle mode
(:class:`~medhorizon_tasks.core.sampling.Oracle`): by design for global-support
items ("study-level items are marked as global support", appendix 6.4), but
for an item whose support is local or proxy, or not given, it means its
windows were absent or in a shape the loader does not read.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .release import Item
from .taxonomy import TASK_CODES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (command start-up time)
if TYPE_CHECKING:
    from ...core.sampling import Oracle

__all__ = ["PUBLISHED", "ReleaseCheck", "check_release", "is_embedded_synthetic", "synthetic_description",
           "oracle_fallback", "evidence_seconds", "oracle_policy", "oracle_frame_count", "FALLBACK_REASONS",
           "ORACLE_CAP", "ORACLE_SOURCES", "oracle_source"]

#: The cap of the oracle's fallbacks only (an item whose release lists its evidence images is shown every one,
#: as the paper's oracle: "the variable number of available evidence images for each item", section 8 RQ2): an
#: item with evidence windows but no listed images is shown the windows' 1 FPS frames thinned to this cap, one
#: without evidence the whole video's; 64 is the cap of the paper's fixed-frame rows ("Uniform vision+text uses
#: 64 frames", section 8 RQ2). The paper describes neither fallback: the package's choice.
ORACLE_CAP = 64

#: What the oracle shows an item (a record's ``oracle_source``), as the reports name it.
ORACLE_SOURCES = {
    "images": "the release's listed evidence images, every one (the paper's oracle)",
    "windows": "the package's fallback: the evidence windows' 1 FPS frames, thinned to the cap",
    "fps_cap": "the package's fallback: no evidence listed, the whole video's 1 FPS frames thinned to the cap",
}

PUBLISHED = {
    "items": 1253,
    "videos": 340,
    "task": {"PR": 517, "SD": 112, "RL": 60, "BPQ": 39, "LLS": 39, "Site": 47, "Hist": 47, "Size": 47, "IR": 235,
             "WR": 26, "RSR": 26, "CPR": 26, "LA": 32},
    "answer": {"A": 309, "B": 303, "C": 319, "D": 322},
    "source": {"AutoLaparo": 44, "Galar": 60, "GraSP": 112, "MultiBypass": 403, "PitVQA": 13, "REAL-Colon": 251,
               "TMVP": 340, "US-Study": 30},
    "source_videos": {"AutoLaparo": 20, "Galar": 44, "GraSP": 13, "MultiBypass": 125, "PitVQA": 10,
                      "REAL-Colon": 39, "TMVP": 59, "US-Study": 30},
}
_WHERE = {"items": "Table 3", "videos": "Table 3", "task": "appendix 6.3", "answer": "appendix 6.3",
          "source": "appendix 6.3", "source_videos": "Table 4"}
_WHAT = {"task": "task {} items", "answer": "answer {} items", "source": "source {} items",
         "source_videos": "source {} videos"}

FALLBACK_REASONS = {
    "global": "global support: the whole procedure is the evidence (by design)",
    "no_windows": "local, proxy or unstated support but no evidence windows the loader could read",
}


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def oracle_fallback(item: Item) -> str | None:
    """Why the oracle mode shows this item the 1 FPS + cap frames instead of its evidence: ``"global"``,
    ``"no_windows"`` (see the module doc), or None when it has evidence windows or images."""
    if item.evidence_windows or item.evidence_frames:
        return None
    return "global" if item.evidence_support == "global" else "no_windows"


def oracle_source(item: Item) -> str:
    """What the oracle shows this item (:data:`ORACLE_SOURCES`): ``"images"`` when the release lists its evidence
    images, else ``"windows"`` when it has evidence windows, else ``"fps_cap"``."""
    if item.evidence_frames:
        return "images"
    return "windows" if item.evidence_windows else "fps_cap"


def evidence_seconds(item: Item) -> tuple[tuple[float, float], ...]:
    """The item's evidence windows, given in the data's frame numbering at the data's ``fps``, in seconds:
    the oracle looks them up in the file by time (see :mod:`medhorizon_tasks.core.video.metadata`)."""
    return tuple((a / item.fps, b / item.fps) for a, b in item.evidence_windows)


def oracle_policy(item: Item, fps: float = 1.0, cap: int = ORACLE_CAP) -> Oracle:
    """The oracle's frame policy for an item: every one of the release's own evidence images when it lists them,
    else (the package's fallbacks) its evidence windows' ``fps`` frames thinned to ``cap``, else the whole video's
    (:class:`~medhorizon_tasks.core.sampling.Oracle`)."""
    from ...core.sampling import Oracle  # here only: the frame planner brings numpy, which scoring does not need

    return Oracle(evidence_seconds(item), fps=fps, cap=cap,
                  fallback_cap=cap, images=tuple(f / item.fps for f in item.evidence_frames))


def oracle_frame_count(item: Item, fps: float = 1.0, cap: int = ORACLE_CAP) -> int:
    """How many frames the oracle shows an item, planned on the data's ``num_frames`` / ``fps`` (a run's
    records carry the count of the file's own plan)."""
    from ...core.sampling import VideoMeta, plan_frames

    return len(plan_frames(VideoMeta(item.num_frames, item.fps), oracle_policy(item, fps, cap)))


#: What marks the embedded synthetic benchmark (``data.synthetic``): every video key starts with this and every
#: question carries its probe tag (``[probe #N]``, which the probe models read).
SYNTHETIC_KEY_PREFIX = "syn-"
SYNTHETIC_QUESTION_MARK = "[probe #"


def is_embedded_synthetic(items: list[Item]) -> bool:
    """Whether ``items`` are the package's embedded synthetic benchmark (or a part of it), not a release."""
    return bool(items) and all(it.video_key.startswith(SYNTHETIC_KEY_PREFIX) and SYNTHETIC_QUESTION_MARK in it.question
                               for it in items)


def synthetic_description(n_items: int, n_videos: int) -> str:
    """``the embedded synthetic benchmark (88 items over 16 videos), not the release``: what every report says
    of that data, in one line, instead of comparing it with the release's counts."""
    return f"the embedded synthetic benchmark ({n_items:,} items over {n_videos:,} videos), not the release"


@dataclass
class ReleaseCheck:
    """What :func:`check_release` found: ``differences`` (one text each), whether the release is a
    ``subset`` of the published one, and the items the oracle falls back for (``fallback``: reason -> uids)."""

    n_items: int
    n_videos: int
    differences: list[str] = field(default_factory=list)
    subset: bool = False
    fallback: dict[str, list[str]] = field(default_factory=dict)
    synthetic: bool = False  # the embedded synthetic benchmark: named as such, not compared count by count

    @property
    def matches(self) -> bool:
        return not self.differences

    def to_json(self) -> dict:
        return {"items": self.n_items, "videos": self.n_videos, "matches_published": self.matches,
                "subset": self.subset, "synthetic": self.synthetic, "differences": self.differences,
                "oracle_fallback": {k: list(v) for k, v in self.fallback.items()}}

    def warnings(self, limit: int = 20) -> list[str]:
        """The lines every pre-flight and ``check`` print (nothing when the release is the published one and
        every local item has windows)."""
        out = []
        if self.synthetic:
            out.append(f"note: this is {synthetic_description(self.n_items, self.n_videos)}: its scores test the "
                       "pipeline and are not comparable with the paper's tables")
        elif self.differences:
            kind = ("a subset of the published release (a partial download?)" if self.subset
                    else "not the published release")
            out.append(f"warning: this MedHorizon release is {kind}: {self.n_items:,} items over {self.n_videos:,} "
                       f"videos, published {PUBLISHED['items']:,} over {PUBLISHED['videos']:,} (paper Table 3, "
                       f"appendix 6.3, Table 4); its scores are not comparable with the paper's tables:")
            out += [f"  - {d}" for d in self.differences[:limit]]
            if len(self.differences) > limit:
                out.append(f"  ... and {len(self.differences) - limit} more")
        bad = self.fallback.get("no_windows", [])
        if bad:
            shown = ", ".join(bad[:limit]) + (f", ... {len(bad)} in all" if len(bad) > limit else "")
            out.append(f"warning: {len(bad)} item(s) have local, proxy or no evidence support but no evidence "
                       f"windows the loader could read; in oracle mode they fall back to the 1 FPS + cap rule: "
                       f"items {shown}")
        return out


def check_release(items: list[Item]) -> ReleaseCheck:
    """Compare a loaded release with the published counts (module doc)."""
    videos = {it.video_key for it in items}
    found = {"items": len(items), "videos": len(videos)}
    counts = {"task": Counter(it.task for it in items), "answer": Counter(it.answer for it in items),
              "source": Counter(it.source for it in items),
              "source_videos": Counter(src for src, _ in {(it.source, it.video_key) for it in items})}
    check = ReleaseCheck(len(items), len(videos), synthetic=is_embedded_synthetic(items))
    at_most = True
    for key in ("items", "videos"):
        if found[key] != PUBLISHED[key]:
            check.differences.append(f"{found[key]:,} {key}, published {PUBLISHED[key]:,} ({_WHERE[key]})")
            at_most &= found[key] <= PUBLISHED[key]
    for key in ("task", "answer", "source", "source_videos"):
        published = PUBLISHED[key]
        by_norm = {_norm(k): k for k in published}
        seen: dict[str, int] = {}
        for name, n in counts[key].items():
            canonical = by_norm.get(_norm(name))
            if canonical is None:
                check.differences.append(f"{_WHAT[key].format(repr(name))}: {n:,}, not in the paper "
                                         f"({_WHERE[key]} names {', '.join(published)})")
                at_most = False
                continue
            seen[canonical] = seen.get(canonical, 0) + n
        order = TASK_CODES if key == "task" else tuple(published)
        for name in order:
            n = seen.get(name, 0)
            if n != published[name]:
                check.differences.append(f"{_WHAT[key].format(name)}: {n:,}, published {published[name]:,} "
                                         f"({_WHERE[key]})")
                at_most &= n <= published[name]
    check.subset = bool(check.differences) and at_most
    for it in items:
        reason = oracle_fallback(it)
        if reason:
            check.fallback.setdefault(reason, []).append(it.uid)
    return check
