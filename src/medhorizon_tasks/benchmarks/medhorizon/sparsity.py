"""Evidence sparsity of MedHorizon questions (paper appendix 6.4).

Per question q: ``r_q = |E_q| / N_q``, where ``E_q`` is the union of the
evidence frames (every frame inside any of the item's inclusive
``evidence_windows``; overlapping windows count once) and ``N_q`` is the
item's ``num_frames`` (decoded frames of the full video).

The statistic is taken over the *localizable* subset: items whose
``evidence_support`` is not ``"global"`` and that have at least one window.
Global-support questions (whole-study ultrasound, exam-level bowel
preparation, procedure-level aggregation) are excluded because their support
is intentionally the whole procedure; items with no windows at all are
excluded too. The report counts both exclusions.

The paper's audit (appendix 6.4): 1,035 localizable questions, mean 0.166%
(1.7 evidence frames per 1,000 decoded frames), median 0.051%; 894 exact or
directly localized ("local" here) and 141 lesion-union proxies ("proxy").
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from ...core.text import pct
from .release import Item
from .taxonomy import TASK_CODES

__all__ = ["evidence_frames", "evidence_ratio", "is_localizable", "sparsity_report", "format_sparsity",
           "PAPER_AUDIT"]

PAPER_AUDIT = {"n_localizable": 1035, "mean": 0.00166, "median": 0.00051, "evidence_frames_per_1000": 1.7,
               "n_local": 894, "n_proxy": 141}

DEFINITION = ("r_q = |E_q| / N_q: frames in the union of the question's evidence windows (inclusive) over the "
              "video's decoded frames; mean and median over localizable questions (not global support, at least "
              "one window)")


def evidence_frames(windows, num_frames: int) -> int:
    """|E_q|: the number of frames in the union of inclusive ``(start, end)`` windows, clipped to the video."""
    spans = sorted((max(0, int(a)), min(int(num_frames) - 1, int(b))) for a, b in windows)
    total, cur_a, cur_b = 0, None, None
    for a, b in spans:
        if b < a:
            continue
        if cur_b is None or a > cur_b + 1:
            if cur_b is not None:
                total += cur_b - cur_a + 1
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a + 1
    return total


def evidence_ratio(item: Item) -> float:
    """r_q of one item (0..1)."""
    return evidence_frames(item.evidence_windows, item.num_frames) / item.num_frames


def is_localizable(item: Item) -> bool:
    return item.evidence_support != "global" and len(item.evidence_windows) > 0


def _stats(ratios: list[float]) -> dict:
    n = len(ratios)
    return {
        "n": n,
        "mean": statistics.fmean(ratios) if n else None,
        "median": statistics.median(ratios) if n else None,
    }


def _support_key(item: Item) -> str:
    return item.evidence_support or "unspecified"


def sparsity_report(items: list[Item]) -> dict:
    """The evidence-sparsity audit of ``items`` (ratios as fractions 0..1; JSON-serialisable).

    Keys: ``n_items``, ``n_localizable``, ``n_global_excluded``,
    ``n_without_windows_excluded``, ``mean``, ``median`` (None when nothing is
    localizable), ``evidence_frames_per_1000`` (mean x 1000), ``by_support``
    (``local`` = exact/direct windows, ``proxy`` = lesion-union proxies,
    ``unspecified`` when the release gives windows without a support kind;
    each ``{"n", "mean", "median"}``), ``by_task`` (taxonomy order) and
    ``by_source`` (alphabetical), each ``{"n", "mean", "median",
    "n_excluded"}`` over every task/source that has items, ``definition`` and
    ``paper`` (the paper's audit, for comparison).
    """
    ratios: list[float] = []
    by_support: dict[str, list[float]] = defaultdict(list)
    by_task: dict[str, list[float]] = defaultdict(list)
    by_source: dict[str, list[float]] = defaultdict(list)
    excl_task: dict[str, int] = defaultdict(int)
    excl_source: dict[str, int] = defaultdict(int)
    n_global = n_nowin = 0
    for it in items:
        by_task.setdefault(it.task, [])
        by_source.setdefault(it.source, [])
        if not is_localizable(it):
            if it.evidence_support == "global":
                n_global += 1
            else:
                n_nowin += 1
            excl_task[it.task] += 1
            excl_source[it.source] += 1
            continue
        r = evidence_ratio(it)
        ratios.append(r)
        by_support[_support_key(it)].append(r)
        by_task[it.task].append(r)
        by_source[it.source].append(r)
    overall = _stats(ratios)
    support_order = [k for k in ("local", "proxy", "unspecified") if k in by_support]
    task_order = [c for c in TASK_CODES if c in by_task] + sorted(c for c in by_task if c not in TASK_CODES)
    return {
        "n_items": len(items),
        "n_localizable": overall["n"],
        "n_global_excluded": n_global,
        "n_without_windows_excluded": n_nowin,
        "mean": overall["mean"],
        "median": overall["median"],
        "evidence_frames_per_1000": None if overall["mean"] is None else overall["mean"] * 1000,
        "by_support": {k: _stats(by_support[k]) for k in support_order},
        "by_task": {c: {**_stats(by_task[c]), "n_excluded": excl_task.get(c, 0)} for c in task_order},
        "by_source": {s: {**_stats(by_source[s]), "n_excluded": excl_source.get(s, 0)} for s in sorted(by_source)},
        "definition": DEFINITION,
        "paper": dict(PAPER_AUDIT),
    }


_SUPPORT_LABEL = {"local": "exact (local)", "proxy": "proxy (lesion union)", "unspecified": "unspecified"}


def format_sparsity(report: dict) -> str:
    """A readable table of :func:`sparsity_report` (ratios in percent)."""
    lines = [
        "Evidence sparsity (MedHorizon appendix 6.4): r_q = |E_q| / N_q",
        f"questions: {report['n_items']}, localizable: {report['n_localizable']}; excluded: "
        f"{report['n_global_excluded']} global-support (the whole procedure is the evidence), "
        f"{report['n_without_windows_excluded']} without evidence windows",
    ]
    if report["mean"] is None:
        lines.append("no localizable questions: nothing to estimate")
    else:
        lines.append(f"mean r_q {pct(report['mean'], 3, unit='%')} ({report['evidence_frames_per_1000']:.1f} evidence frames per "
                     f"1,000 decoded frames), median {pct(report['median'], 3, unit='%')}")
    rows: list[tuple[str, str, str, str, str]] = []

    def section(title: str, groups: dict, labels=None, excluded: bool = False):
        if not groups:
            return
        rows.append((title, "", "", "", ""))
        for key, g in groups.items():
            name = (labels or {}).get(key, key)
            rows.append(("  " + name, str(g["n"]), pct(g["mean"], 3, unit='%'), pct(g["median"], 3, unit='%'),
                         str(g.get("n_excluded", "")) if excluded else ""))

    section("by support", report.get("by_support", {}), _SUPPORT_LABEL)
    section("by task", report.get("by_task", {}), excluded=True)
    section("by source", report.get("by_source", {}), excluded=True)
    if rows:
        head = ("group", "n", "mean", "median", "excluded")
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]

        def fmt(r):
            return "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip()

        lines += ["", fmt(head), "  ".join("-" * w for w in widths), *[fmt(r) for r in rows]]
    p = report.get("paper")
    if p:
        lines += ["", f"paper's audit: {p['n_localizable']:,} localizable, mean {pct(p['mean'], 3, unit='%')} "
                      f"({p['evidence_frames_per_1000']:.1f} per 1,000), median {pct(p['median'], 3, unit='%')}; "
                      f"{p['n_local']} exact, {p['n_proxy']} proxy"]
    return "\n".join(lines)
