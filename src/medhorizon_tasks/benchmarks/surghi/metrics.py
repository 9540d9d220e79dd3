"""SurgHiBench metrics (Tasks 1-3), per video, per dataset, and "Overall".

Paper (Sec. 3.1): "Each task is defined below together with its metrics, all computed
per-video and averaged."  Every metric here is a fraction in 0..1 computed on one video's
frames, then averaged (unweighted) over the videos of a dataset; "Overall" is the unweighted
mean over datasets (the paper's Overall rows equal the plain mean of its per-dataset rows).

Labels are canonicalised with the dataset's :class:`~.hierarchy.Hierarchy`.  An unknown
*ground-truth* label is a :class:`~medhorizon_tasks.core.errors.DataError`.  An unknown
*predicted* label is invalid: it is wrong everywhere (not a sibling, not a semantic match,
counted as a cousin) and counted in ``n_invalid`` (phase and step predictions together).

Judgement calls (the paper is silent or ambiguous):

* **macro-F1 label set**: the paper does not say.  Per video we use the labels present in
  that video's ground truth or (valid) predictions, i.e. scikit-learn's default label set;
  invalid predictions are left out of the label set (they still cost the true class its
  recall); ``zero_division=0``.
* **multi-level** of a dataset is sqrt(dataset phase_acc x dataset step_acc), of the
  video-averaged accuracies, not the mean of per-video geometric means: that is what the
  paper's Table 2 reports (e.g. MIPO CLIP 16.2 / 17.0 -> 16.6).  Overall multi-level is the
  mean of the dataset multi-levels (Table 2 Overall CLIP: 8.9, not sqrt(15.0 x 7.1) = 10.3).
* **Step|Phase** of a video with no frame whose phase is right is undefined (NaN); such a
  video is *excluded* from that dataset's average (NaN if no video qualifies), and a NaN
  dataset is skipped in Overall.
* **sibling / cousin** are over *all* frames, exact matches included (an exact match is a
  sibling), so sibling + cousin = 1; this matches Table 4 (sibling + cousin = 100 in every
  row, and sibling >= step accuracy).  "Same phase" is the frame's ground-truth *phase*
  (Fig. 4: "a different step within the correct phase"), not any parent of the ground-truth
  step; in a DAG these differ.
* **semantic step** is over all frames, exact matches included (Table 4: semantic >= step
  accuracy in every row); a step in no semantic group matches only itself.
* **phases only**: a video annotated with phases only (no ground-truth step; supplement A.3:
  Cholec80, AutoLaparo and HeiChole "provide only phase annotations and therefore cannot be
  evaluated on the cross-level tasks") gets phase accuracy and F1; every step and cross-level
  metric is NaN (not applicable), and Overall averages each metric over the datasets where it
  applies.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from ...core.errors import DataError
from .hierarchy import Hierarchy

METRIC_KEYS = ("phase_acc", "phase_f1", "step_acc", "step_f1", "multi_level", "both_wrong", "both_right",
               "step_given_phase", "sibling", "cousin", "semantic_step")
COUNT_KEYS = ("n_videos", "n_invalid")
_INVALID = "\x00<invalid>"


def _canon_gt(labels: Sequence[Any], canon, known, what: str, video: str) -> list[str]:
    out, problems = [], []
    for i, lab in enumerate(labels):
        c = canon(lab) if lab is not None else ""
        if c not in known:
            problems.append(f"video {video}: frame {i}: ground-truth {what} {lab!r} is not in the hierarchy")
        out.append(c)
    if problems:
        raise DataError(problems)
    return out


def _macro_f1(gt: list[str], pred: list[str]) -> float:
    # imported here: scikit-learn (with scipy and pandas) costs over a second, and every command's parser
    # imports this package (the `surghi zeroshot` defaults), not only the commands that score SurgHiBench
    from sklearn.metrics import f1_score

    labels = sorted(set(gt) | (set(pred) - {_INVALID}))
    return float(f1_score(gt, pred, labels=labels, average="macro", zero_division=0))


def video_metrics(gt_phase: Sequence[Any], gt_step: Sequence[Any], pred_phase: Sequence[Any],
                  pred_step: Sequence[Any], hierarchy: Hierarchy, *, video: str = "?") -> dict:
    """All SurgHiBench metrics of one video (per-frame label sequences of equal length).

    Task 1 - "video-averaged accuracy and macro-averaged F1 at each level"; "Multi-level =
      sqrt(Acc_phase x Acc_step), which remains low unless both levels are strong (e.g. 30%
      phase with 10% step yields 17.3%, while 20% on both yields 20%)."
    Task 2 - "The Both-wrong and Both-right rates measure how often both levels are
      simultaneously wrong or right"; "Step|Phase is step accuracy conditioned on the phase
      being correct" (NaN here when no frame's phase is correct).
    Task 3 - "Sibling step accuracy measures how often the predicted step falls within the
      same phase as the ground-truth step, even if the exact step is wrong.  Cousin step
      accuracy measures the opposite: how often the prediction lands in an entirely
      different phase."  "semantic step accuracy ... measures whether the model recognizes
      the type of surgical action being performed regardless of anatomical site".
    Returns the :data:`METRIC_KEYS` plus ``n_videos`` (1) and ``n_invalid``.
    """
    n = len(gt_phase)
    lens = {"gt_phase": n, "gt_step": len(gt_step), "pred_phase": len(pred_phase), "pred_step": len(pred_step)}
    if len(set(lens.values())) != 1:
        raise DataError(f"video {video}: label sequences differ in length: "
                        + ", ".join(f"{k}={v}" for k, v in lens.items()))
    if n == 0:
        raise DataError(f"video {video}: no frames")
    h = hierarchy
    gp = _canon_gt(gt_phase, h.canonical_phase, set(h.phases), "phase", video)
    phases = set(h.phases)
    pp = [c if (c := h.canonical_phase(x)) in phases else _INVALID for x in pred_phase]
    if not h.steps or all(s is None for s in gt_step):
        return _phase_only(gp, pp)
    gs = _canon_gt(gt_step, h.canonical_step, h.membership, "step", video)
    ps = [c if (c := h.canonical_step(x)) in h.membership else _INVALID for x in pred_step]
    n_invalid = pp.count(_INVALID) + ps.count(_INVALID)

    ph_ok = np.array([a == b for a, b in zip(gp, pp)])
    st_ok = np.array([a == b for a, b in zip(gs, ps)])
    sibling = np.array([
        ok or (p != _INVALID and p in h.child_steps(phase))
        for ok, p, phase in zip(st_ok, ps, gp)])
    semantic = np.array([
        ok or (p != _INVALID and h.semantic_group(p) == h.semantic_group(g))
        for ok, p, g in zip(st_ok, ps, gs)])
    phase_acc, step_acc = float(ph_ok.mean()), float(st_ok.mean())
    return {
        "phase_acc": phase_acc,
        "phase_f1": _macro_f1(gp, pp),
        "step_acc": step_acc,
        "step_f1": _macro_f1(gs, ps),
        "multi_level": math.sqrt(phase_acc * step_acc),
        "both_wrong": float((~ph_ok & ~st_ok).mean()),
        "both_right": float((ph_ok & st_ok).mean()),
        "step_given_phase": float(st_ok[ph_ok].mean()) if ph_ok.any() else float("nan"),
        "sibling": float(sibling.mean()),
        "cousin": float(1.0 - sibling.mean()),
        "semantic_step": float(semantic.mean()),
        "n_videos": 1,
        "n_invalid": n_invalid,
    }


def _phase_only(gp: list[str], pp: list[str]) -> dict:
    """A video annotated with phases only: phase accuracy and F1; the rest not applicable (NaN)."""
    out = {k: float("nan") for k in METRIC_KEYS}
    out.update(phase_acc=float(np.mean([a == b for a, b in zip(gp, pp)])), phase_f1=_macro_f1(gp, pp),
               n_videos=1, n_invalid=pp.count(_INVALID))
    return out


def _nanmean(values: list[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return float(sum(vals) / len(vals)) if vals else float("nan")


def dataset_metrics(videos: Mapping[str, tuple[Sequence[Any], Sequence[Any], Sequence[Any], Sequence[Any]]],
                    hierarchy: Hierarchy) -> dict:
    """Video-averaged metrics of one dataset: ``{video: (gt_phase, gt_step, pred_phase, pred_step)}``.

    Each metric is the unweighted mean over videos, except ``multi_level`` =
    sqrt(phase_acc x step_acc) of the averaged accuracies and ``step_given_phase``, which
    skips videos where it is undefined.  All problems of all videos are reported together.
    """
    if not videos:
        raise DataError("no videos", source=hierarchy.name or None)
    per: list[dict] = []
    problems: list[str] = []
    for vid, seqs in videos.items():
        try:
            gp, gs, pp, ps = seqs
        except (TypeError, ValueError):
            problems.append(f"video {vid}: expected (gt_phase, gt_step, pred_phase, pred_step)")
            continue
        try:
            per.append(video_metrics(gp, gs, pp, ps, hierarchy, video=str(vid)))
        except DataError as e:
            problems.extend(e.problems)
    if problems:
        raise DataError(problems, source=hierarchy.name or None)
    return aggregate_videos(per)


def aggregate_videos(per_video: Sequence[Mapping[str, Any]]) -> dict:
    """One dataset's row from its videos' :func:`video_metrics` (the rule :func:`dataset_metrics`
    applies; exposed so a bootstrap over videos reuses it): unweighted means over videos,
    ``step_given_phase`` skipping undefined (NaN) videos, ``multi_level`` recomputed from the
    averaged accuracies, counts summed."""
    if not per_video:
        raise DataError("no videos to aggregate")
    out = {k: _nanmean([float(m[k]) for m in per_video]) if k == "step_given_phase"
           else float(np.mean([m[k] for m in per_video])) for k in METRIC_KEYS}
    out["multi_level"] = math.sqrt(out["phase_acc"] * out["step_acc"])
    out["n_videos"] = len(per_video)
    out["n_invalid"] = int(sum(m.get("n_invalid", 0) for m in per_video))
    return out


def overall(per_dataset: Mapping[str, Mapping[str, Any]]) -> dict:
    """The paper's "Overall" row: unweighted mean over datasets of each metric (NaN
    datasets skipped), counts summed.  ``multi_level`` is the mean of the dataset
    multi-levels, as in Table 2."""
    if not per_dataset:
        raise DataError("overall: no datasets")
    missing = [f"{name}: missing {k}" for name, m in per_dataset.items()
               for k in (*METRIC_KEYS, "n_videos") if k not in m]
    if missing:
        raise DataError(missing, source="overall")
    out: dict[str, Any] = {k: _nanmean([float(m[k]) for m in per_dataset.values()]) for k in METRIC_KEYS}
    out["n_videos"] = int(sum(m["n_videos"] for m in per_dataset.values()))
    out["n_invalid"] = int(sum(m.get("n_invalid", 0) for m in per_dataset.values()))
    return out
