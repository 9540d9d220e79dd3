"""Leaderboards: score validated submissions, rank them, test each against the leader (text: :mod:`.tables`).

One board per benchmark (MedHorizon, Sureon, SurgHiBench), each ranking the
submissions made on one version of its data. Every submission is validated
against the data first (:func:`~.submission.validate_submission`); an invalid
one, or one made on another data version (not comparable), is refused with
its reasons and nothing is written. Scores come from the package's own
scorers, so a leaderboard number equals what ``medhorizon-tasks score`` says
for the same predictions.

Headline metric, 95% interval, and the test against the leader:

* **MedHorizon**: overall item-level accuracy (``medhorizon.scoring.report``;
  unextractable, missing and video-error answers count as wrong).
  Interval: ``stats.bootstrap_ci`` (percentile bootstrap over items, as the
  Sureon paper's "non-parametric bootstrap intervals"; the Wilson interval is
  in the CSV too). Test: McNemar's test (``stats.mcnemar_tests``, every entry
  at once; statsmodels' numbers) on the per-item correctness of the entry and
  the leader (paired on the same items; exact binomial below 25 discordant
  pairs).
* **Sureon**: mu, the pooled accuracy over the MCQ and TO items
  (``sureon.scoring.report``; SM is judged separately and never enters mu,
  nor the tests). Interval and test as MedHorizon.
* **SurgHiBench**: Overall multi-level (the mean over datasets of
  sqrt(video-averaged phase acc x step acc), ``surghi.metrics``). The unit
  of resampling is the video, stratified by dataset: each resample draws,
  for every dataset, as many videos as it has, with replacement; each
  dataset row is recomputed with ``metrics.aggregate_videos`` and Overall
  with ``metrics.overall`` (so the bootstrap follows the very averaging
  rules of the metric). Interval: percentile of the resampled Overall.
  Test: a paired permutation test over videos (``scipy.stats.permutation_test``,
  ``permutation_type="samples"``): under "entry = leader" the two entries'
  results on each video are exchangeable, so each video's pair is swapped or
  not and the Overall multi-level difference recomputed; two-sided p. It is
  exact (all 2^n swaps) up to ``n_resamples`` arrangements and randomized
  beyond, where scipy counts the observed arrangement, so p is never 0: with
  the few videos of a small benchmark the test says honestly how little they
  can show (8 videos, every one better: p = 2/256), where a bootstrap
  p-value would claim p = 0. Frames within a video are correlated, so
  resampling frames (or items) would give intervals that are too narrow;
  videos are the independent units. The interval's resampling is done here,
  not by ``scipy.stats.bootstrap``, because a dataset may have one video.

Across the entries compared with the leader (all but the leader), p-values
are Holm-corrected (``stats.holm_adjust``); "sig. vs leader" is "yes" when
the adjusted p <= alpha (0.05). Resampling uses ``numpy.random.default_rng(
seed)`` (seed 0) with ``n_resamples`` resamples (default 2,000), so a build is
reproducible. Ranks are competition ranks ("1, 2, 2, 4") of the headline;
the leader is the first entry of rank 1 (ties broken by model name).
"""

from __future__ import annotations

import bisect
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData
from ..benchmarks.paper_match import board_problems
from ..benchmarks.standard import entry_departures
from ..core.errors import DataError
from ..core.stats import accuracy_summary, holm_adjust, mcnemar_tests, paired_difference
from .submission import Submission, read_submission, validate_submission

__all__ = ["Entry", "Board", "build_leaderboard", "score_entry", "rank_board", "surghi_bootstrap",
           "pair_by_model", "pair_by_key", "OFF_PROTOCOL_NOTE",
           "paired_permutation_pvalue",
           "DEFAULT_N_RESAMPLES", "DEFAULT_SEED", "SCORER_VERSION"]

DEFAULT_N_RESAMPLES = 2000
DEFAULT_SEED = 0
DEFAULT_ALPHA = 0.05
# Bump when a change of scoring code would change a scored entry (headline, interval, groups, correctness):
# the submission service keeps each entry's score and rescores the kept ones whose version differs.
SCORER_VERSION = 1


@dataclass
class Entry:
    """One submission on a board: its scores, rank and test against the leader (fractions 0..1)."""

    submission: Submission
    headline: float
    ci: tuple[float, float]
    n: int
    secondary: dict[str, Any]
    rank: int = 0
    p_value: float | None = None       # raw p of "entry = leader"; None for the leader
    p_holm: float | None = None        # Holm-adjusted over the entries compared with the leader
    significant: bool | None = None    # adjusted p <= alpha; None for the leader
    paired: Any = field(default=None, repr=False)  # correctness (uid -> bool) or per-video metrics
    # the public per-group tables of the entry's page: [{"name", "unit", "ci_method", "rows": [{"key", "value",
    # "n", "ci95"}]}], aggregates only (never an item's correctness)
    groups: list[dict] = field(default_factory=list, repr=False)
    # how the run departs from the benchmark's standard protocol (``benchmarks.standard``); non-empty: the
    # entry is marked and ranked apart (rank 0, no test against the leader)
    off_protocol: list[str] = field(default_factory=list)
    # who may be paired with whom for a paired column (Sureon's MG): entries with equal keys; None: no pair
    pair_key: Any = field(default=None, repr=False)

    @property
    def metadata(self) -> dict:
        return self.submission.metadata

    @property
    def is_leader(self) -> bool:
        return self.p_value is None and self.significant is None and not self.off_protocol


@dataclass
class Board:
    """One benchmark's ranked entries and how its numbers were made."""

    benchmark: str
    data_version: str
    data_source: str
    metric: str                              # headline metric name
    n_unit: str                              # what n counts: "items" / "videos"
    secondary: list[tuple[str, str, str]]    # (key, label, "pct" | "count")
    entries: list[Entry]
    ci_method: str
    test_method: str
    n_resamples: int
    seed: int
    alpha: float
    notes: list[str] = field(default_factory=list)
    paper_refused: list[str] = field(default_factory=list)  # why no entry is set beside the paper's rows

    @property
    def name(self) -> str:
        return BENCHMARK_NAMES[self.benchmark]


# ------------------------------------------------------------------ scoring

def _pct_of(summary: Mapping | None):
    return None if not summary else summary.get("accuracy")


def _group(name: str, unit: str, ci_method: str, rows: Iterable[tuple[str, float | None, int, Any]],
           labels: Mapping[str, str] | None = None) -> dict:
    """One public table of an entry's page; ``labels``: the names shown for the keys (task codes spelled out)."""
    labels = labels or {}
    return {"name": name, "unit": unit, "ci_method": ci_method,
            "rows": [{"key": k, "label": labels.get(k, k), "value": v, "n": n, "ci95": list(ci) if ci else None}
                     for k, v, n, ci in rows]}


def _labels(benchmark: str) -> dict[str, str]:
    """Group keys -> what a reader is shown: "Phase Recognition (PR)", "Fine-grained", "Action Description (AD)"."""
    if benchmark == "medhorizon":
        from ..benchmarks.medhorizon.taxonomy import FAMILIES, TASK_TYPES

        return {**{t.code: f"{t.name} ({t.code})" for t in TASK_TYPES},
                **{f: f.replace("_", " ").capitalize().replace("Fine grained", "Fine-grained") for f in FAMILIES}}
    from ..benchmarks.sureon.items import CATEGORIES

    return {**{c.code: f"{c.name} ({c.code})" for c in CATEGORIES}, "perception": "Perception",
            "reasoning": "Reasoning (no SM)"}


def _wilson_groups(rep: Mapping, tables: Iterable[tuple[str, str]]) -> list[dict]:
    """MedHorizon's ``by_*`` summaries as groups, each accuracy with its Wilson 95% interval."""
    from ..core.stats import wilson_ci

    labels = _labels("medhorizon")
    return [_group(name, "items", "Wilson 95%", ((k, s["accuracy"], s["n"], wilson_ci(s["correct"], s["n"]))
                                                  for k, s in rep[key].items()), labels) for key, name in tables]


def _score_medhorizon(sub: Submission, data: BenchmarkData, n_resamples: int, seed: int) -> Entry:
    from ..benchmarks.medhorizon import scoring

    records = scoring.score_predictions(data.items, sub.predictions, mode=sub.metadata.get("mode"))
    rep = scoring.report(records)
    correct = {r["uid"]: bool(r["correct"]) for r in records}
    s = accuracy_summary(correct, n_resamples=n_resamples, seed=seed)
    fam = rep["by_family"]
    secondary = {"fine_grained": _pct_of(fam.get("fine_grained")),
                 "semantic_reasoning": _pct_of(fam.get("semantic_reasoning")),
                 "invalid": sum(1 for r in records if not r["valid"]),
                 "ci95_wilson_low": s["ci95_wilson"][0], "ci95_wilson_high": s["ci95_wilson"][1]}
    groups = _wilson_groups(rep, (("by_family", "Family"), ("by_task", "Task"), ("by_source", "Source")))
    return Entry(sub, s["accuracy"], tuple(s["ci95_bootstrap"]), s["n"], secondary, paired=correct, groups=groups)


def _score_sureon(sub: Submission, data: BenchmarkData, n_resamples: int, seed: int) -> Entry:
    from ..benchmarks.sureon import scoring

    records = scoring.score_predictions(data.items, sub.predictions, mode=sub.metadata.get("mode"))
    rep = scoring.report(records, n_resamples=n_resamples, seed=seed)
    scored = [r for r in records if r["kind"] != "sm"]
    correct = {r["uid"]: bool(r["correct"]) for r in scored}
    mu = rep["mu"]
    secondary = {"perception": _pct_of(rep["perception"]), "reasoning": _pct_of(rep["reasoning"]),
                 "invalid": sum(1 for r in scored if not r["valid"]),
                 "ci95_wilson_low": mu["ci95_wilson"][0], "ci95_wilson_high": mu["ci95_wilson"][1]}
    boot = f"percentile bootstrap ({n_resamples} resamples, seed {seed})"
    labels = _labels("sureon")
    groups = [_group("Family", "items", boot, ((k, rep[k]["accuracy"], rep[k]["n"], rep[k]["ci95_bootstrap"])
                                               for k in ("perception", "reasoning") if rep.get(k)), labels),
              _group("Category", "items", boot, ((k, v["accuracy"], v["n"], v["ci95_bootstrap"])
                                                 for k, v in rep["by_category"].items()), labels)]
    return Entry(sub, mu["accuracy"], tuple(mu["ci95_bootstrap"]), mu["n"], secondary, paired=correct,
                 groups=groups)


def _score_surghi(sub: Submission, data: BenchmarkData, n_resamples: int, seed: int) -> Entry:
    from ..benchmarks.surghi.scoring import evaluate

    result = evaluate(data.rows, sub.predictions, data.hierarchies)
    rep = result.report()
    ov = rep["overall"]
    secondary: dict[str, Any] = {f"multi_level[{ds}]": row["multi_level"] for ds, row in sorted(rep["datasets"].items())}
    for k in ("phase_acc", "step_acc", "phase_f1", "step_f1"):
        secondary[k] = ov[k]
    secondary["invalid"] = ov["n_invalid"]
    # Videos in a fixed order (by name) per dataset: entries on the same data line up for the paired test.
    per_video = {ds: [vids[v] for v in sorted(vids)] for ds, vids in sorted(result.per_video.items())}
    rows = []
    for ds, vids in per_video.items():  # each dataset's multi-level, its videos resampled as the board's Overall
        dist = surghi_bootstrap([{ds: vids}], n_resamples=n_resamples, seed=seed)[0]
        rows.append((ds, rep["datasets"][ds]["multi_level"], len(vids),
                     (float(np.percentile(dist, 2.5)), float(np.percentile(dist, 97.5)))))
    groups = [_group("Dataset (multi-level)", "videos",
                     f"percentile bootstrap over videos ({n_resamples} resamples, seed {seed})", rows)]
    return Entry(sub, ov["multi_level"], (math.nan, math.nan), int(ov["n_videos"]), secondary, paired=per_video,
                 groups=groups)


def surghi_bootstrap(per_video: list[Mapping[str, list[Mapping]]], *, n_resamples: int = DEFAULT_N_RESAMPLES,
                     seed: int = DEFAULT_SEED) -> np.ndarray:
    """Overall multi-level of each entry on the same stratified video resamples: shape (entries, n_resamples).

    ``per_video``: per entry, ``{dataset: [video_metrics(...) per video]}``,
    the videos in the same order for every entry. Each resample draws, per
    dataset, ``n_videos`` indices with replacement (one draw shared by all
    entries: the pairing), rebuilds each dataset row with
    ``aggregate_videos`` and takes ``overall(...)["multi_level"]``.
    """
    from ..benchmarks.surghi.metrics import aggregate_videos, overall

    if not per_video:
        return np.empty((0, n_resamples))
    if n_resamples < 1:
        raise DataError(f"n_resamples must be >= 1, got {n_resamples}")
    datasets = list(per_video[0])
    sizes = {ds: len(per_video[0][ds]) for ds in datasets}
    for e, pv in enumerate(per_video[1:], 1):
        if list(pv) != datasets or any(len(pv[ds]) != sizes[ds] for ds in datasets):
            raise DataError(f"entry {e}: not on the same datasets and videos as entry 0; the bootstrap "
                            "needs the same data")
    rng = np.random.default_rng(seed)
    out = np.empty((len(per_video), n_resamples))
    for b in range(n_resamples):
        idx = {ds: rng.integers(0, sizes[ds], sizes[ds]) for ds in datasets}
        for e, pv in enumerate(per_video):
            rows = {ds: aggregate_videos([pv[ds][i] for i in idx[ds]]) for ds in datasets}
            out[e, b] = overall(rows)["multi_level"]
    return out


def paired_permutation_pvalue(leader: Mapping[str, list[Mapping]], other: Mapping[str, list[Mapping]], *,
                              n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = DEFAULT_SEED) -> float:
    """Two-sided p of "same Overall multi-level" for two entries on the same videos
    (``{dataset: [video_metrics(...)]}``, same order): a paired permutation test that swaps the two
    entries' results video by video (``scipy.stats.permutation_test``; exact up to ``n_resamples``
    arrangements). Overall multi-level depends on the per-video phase and step accuracies only
    (``aggregate_videos`` / ``overall``), so the statistic is computed from those, vectorized."""
    from scipy.stats import permutation_test

    datasets = list(leader)
    if list(other) != datasets or any(len(other[d]) != len(leader[d]) for d in datasets):
        raise DataError("paired permutation test: the two entries are not on the same datasets and videos")
    ds_of = np.concatenate([np.full(len(leader[d]), k) for k, d in enumerate(datasets)])
    n = len(ds_of)
    if n == 0:
        raise DataError("paired permutation test: no videos")
    phase = np.array([v["phase_acc"] for d in datasets for v in leader[d]]
                     + [v["phase_acc"] for d in datasets for v in other[d]], dtype=float)
    step = np.array([v["step_acc"] for d in datasets for v in leader[d]]
                    + [v["step_acc"] for d in datasets for v in other[d]], dtype=float)
    masks = [ds_of == k for k in range(len(datasets))]

    def multi_level(ids):  # ids: (..., n) positions into phase / step
        per_ds = [np.sqrt(phase[ids][..., m].mean(axis=-1) * step[ids][..., m].mean(axis=-1)) for m in masks]
        return np.mean(per_ds, axis=0)

    def statistic(x, y, axis=-1):
        return multi_level(np.moveaxis(x, axis, -1)) - multi_level(np.moveaxis(y, axis, -1))

    res = permutation_test((np.arange(n), np.arange(n) + n), statistic, permutation_type="samples",
                           vectorized=True, n_resamples=n_resamples, alternative="two-sided",
                           random_state=np.random.default_rng(seed))
    return float(min(1.0, res.pvalue))


# ------------------------------------------------------------------ ranking and tests

def _rank(entries: list[Entry]) -> list[Entry]:
    def key(e: Entry):
        return (-round(e.headline, 12), e.metadata["model"].lower(), e.submission.source)

    entries = sorted(entries, key=key)
    # rank = 1 + the number of entries strictly above (ties share a rank; a NaN is above no one and below no one),
    # counted by bisection: comparing every pair made ranking 1,000 entries take about a second
    values = [round(e.headline, 12) for e in entries]
    ordered = sorted(v for v in values if v == v)
    for e, v in zip(entries, values):
        e.rank = 1 + (len(ordered) - bisect.bisect_right(ordered, v) if v == v else 0)
    return entries


def _apart(entries: list[Entry]) -> list[Entry]:
    """Off-protocol entries: after the ranked ones, best first, with no rank (0)."""
    entries = sorted(entries, key=lambda e: (-(e.headline if e.headline == e.headline else -1.0),
                                             e.metadata["model"].lower(), e.submission.source))
    for e in entries:
        e.rank = 0
    return entries


def _test_against_leader(entries: list[Entry], pvalue: Callable[[int], float], alpha: float) -> None:
    """``pvalue(i)``: raw p of entry i (>= 1) against entries[0]; Holm over entries 1..k."""
    if len(entries) < 2:
        return
    raw = [pvalue(i) for i in range(1, len(entries))]
    adjusted, reject = holm_adjust(raw, alpha=alpha)
    for e, p, adj, rej in zip(entries[1:], raw, adjusted, reject):
        e.p_value, e.p_holm, e.significant = p, adj, rej


_MCQ_CI = ("percentile bootstrap over items ({n} resamples, seed {seed}); Wilson interval in the CSV, and beside "
           "a bootstrap interval of one point (every item right, or every one wrong: every resample is the same)")
_MCQ_TEST = "McNemar's test on per-item correctness, paired with the leader; Holm-corrected over the entries"


def score_entry(sub: Submission, data: BenchmarkData, *, n_resamples: int = DEFAULT_N_RESAMPLES,
                seed: int = DEFAULT_SEED) -> Entry:
    """One validated submission scored on its own: headline, interval (MedHorizon, Sureon; SurgHiBench's comes
    from :func:`rank_board`, which resamples the entries' videos together), secondary columns and the public
    per-group table (``Entry.groups``). It depends on the submission and the data alone, so a caller may keep
    it (the submission service does, by the submission's hash) and rank it again with other entries."""
    if sub.benchmark != data.benchmark:
        raise DataError(f"a {sub.benchmark} submission cannot be scored on {data.benchmark} data")
    score = {"surghi": _score_surghi, "medhorizon": _score_medhorizon}.get(sub.benchmark, _score_sureon)
    entry = score(sub, data, n_resamples, seed)
    entry.off_protocol = entry_departures(sub.metadata)
    entry.pair_key = sub.metadata["model"]
    return entry


def pair_by_model(e: Entry):
    """``leaderboard build``'s pairing: by model name (the maintainer chose the files)."""
    return e.metadata["model"]


def pair_by_key(e: Entry):
    """The service's pairing: by the entry's ``pair_key`` (its submitter token and model; None: never paired)."""
    return e.pair_key


OFF_PROTOCOL_NOTE = ("Off protocol: entries whose run departs from the benchmark's standard protocol (each "
                     "departure named) are listed apart, after the ranked entries, without a rank or a test against "
                     "the leader.")


def rank_board(benchmark: str, data: BenchmarkData, entries: list[Entry], *,
               n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = DEFAULT_SEED,
               alpha: float = DEFAULT_ALPHA, pair: Callable[[Entry], Any] = pair_by_model,
               pair_rule: str = "the same model name") -> Board:
    """The board of ``entries`` (each from :func:`score_entry` on ``data``): ranked, each tested against the
    leader with Holm's correction, SurgHiBench's intervals resampled over the entries' videos together. The
    entries are changed in place (rank, tests); pass copies to rank the same entries on several boards.

    Entries off the standard protocol (``Entry.off_protocol``) are ranked apart: after the others, rank 0,
    no test. ``pair``: which entries a paired column (Sureon's MG) may pair: those with the same non-None key
    (``leaderboard build``: the model name; the service: :func:`pair_by_key`); ``pair_rule`` says it in the
    board's note."""
    entries = _rank([e for e in entries if not e.off_protocol]) + _apart([e for e in entries if e.off_protocol])
    if benchmark == "surghi":
        boot = surghi_bootstrap([e.paired for e in entries], n_resamples=n_resamples, seed=seed)
        lo_q, hi_q = 100 * alpha / 2, 100 * (1 - alpha / 2)
        for e, dist in zip(entries, boot):
            e.ci = (float(np.percentile(dist, lo_q)), float(np.percentile(dist, hi_q)))
        ranked = [e for e in entries if not e.off_protocol]
        _test_against_leader(ranked, lambda i: paired_permutation_pvalue(
            ranked[0].paired, ranked[i].paired, n_resamples=n_resamples, seed=seed), alpha)
        datasets = sorted(data.hierarchies)
        secondary = [(f"multi_level[{ds}]", f"{ds} multi-level", "pct") for ds in datasets]
        secondary += [("phase_acc", "Phase acc", "pct"), ("step_acc", "Step acc", "pct"),
                      ("phase_f1", "Phase F1", "pct"), ("step_f1", "Step F1", "pct"),
                      ("invalid", "Invalid labels", "count")]
        board = Board(benchmark, data.version, data.source, "Overall multi-level", "videos", secondary, entries,
                      ci_method=f"percentile bootstrap over videos, stratified by dataset ({n_resamples} resamples, "
                                f"seed {seed}; one point when every video scores the same, as at 100%: a mean of "
                                "per-video metrics has no Wilson interval)",
                      test_method="paired permutation test over videos against the leader (exact up to "
                                  f"{n_resamples} arrangements); Holm-corrected over the entries",
                      n_resamples=n_resamples, seed=seed, alpha=alpha,
                      notes=["Overall = unweighted mean over datasets of sqrt(video-averaged phase acc x step acc)."])
    else:
        # every ranked entry against the leader at once (one correctness matrix; a pair at a time took 0.5 s at
        # 1,000); off-protocol entries are ranked apart and tested against nobody
        ranked = [e for e in entries if not e.off_protocol]
        runs = {f"entry {i + 1}": e.paired for i, e in enumerate(ranked)}
        tests = mcnemar_tests(runs, [("entry 1", f"entry {i + 1}") for i in range(1, len(ranked))])
        _test_against_leader(ranked, lambda i: tests[i - 1]["pvalue"], alpha)
        if benchmark == "medhorizon":
            secondary = [("fine_grained", "Fine-grained", "pct"), ("semantic_reasoning", "Semantic reasoning", "pct"),
                         ("invalid", "Invalid/missing", "count")]
            metric, notes = "Overall accuracy", []
        else:
            secondary = [("perception", "Perception", "pct"), ("reasoning", "Reasoning (no SM)", "pct"),
                         ("invalid", "Invalid/missing", "count")]
            metric = "μ (MCQ + TO)"
            notes = ["SM (sequence summarization) is judged by an LLM separately and is not part of mu."]
            found = _multimodal_gains(entries, n_resamples, seed, pair)
            modes = {e.metadata.get("mode") or "visual" for e in entries}
            if found or {"visual", "blind"} <= modes:
                secondary.append(("mg", "MG vs blind [95% CI]", "mg"))
                notes.append("MG = S_v - S_wv: a model's visual mu minus its blind mu (both submitted, the same "
                             f"items), in points, with a paired percentile bootstrap 95% interval over the items "
                             f"({n_resamples} resamples, seed {seed}) and McNemar's p of visual vs blind. A visual "
                             f"and a blind entry are paired only when they have {pair_rule}, one of each; "
                             "otherwise the column is empty.")
        board = Board(benchmark, data.version, data.source, metric, "items", secondary, entries,
                      ci_method=_MCQ_CI.format(n=n_resamples, seed=seed), test_method=_MCQ_TEST,
                      n_resamples=n_resamples, seed=seed, alpha=alpha, notes=notes)
    if any(e.off_protocol for e in entries):
        board.notes.append(OFF_PROTOCOL_NOTE)
    board.paper_refused = board_problems(data)
    if board.paper_refused:
        board.notes.append(f"Not comparable with the {board.name} paper's published rows: "
                           + "; ".join(board.paper_refused) + ".")
    return board


def _multimodal_gains(entries: list[Entry], n_resamples: int, seed: int,
                      pair: Callable[[Entry], Any] = pair_by_model) -> bool:
    """Sureon: each pairing key (``pair``: the model name, or the submitter and model) with one visual and one
    blind entry gets MG = S_v - S_wv on its visual entry's ``secondary`` (``mg``, ``mg_ci95_low`` /
    ``mg_ci95_high``: the paired bootstrap interval, ``mg_pvalue``: McNemar's p; ``stats.paired_difference``).
    Whether any did."""
    by_model: dict[Any, dict[str, list[Entry]]] = {}
    for e in entries:
        key = pair(e)
        if key is None:
            continue
        by_model.setdefault(key, {}).setdefault(e.metadata.get("mode") or "visual", []).append(e)
    found = False
    for modes in by_model.values():
        if len(modes.get("visual", [])) != 1 or len(modes.get("blind", [])) != 1:
            continue  # no pair, or several of a mode: which two are paired is not said
        visual, blind = modes["visual"][0], modes["blind"][0]
        diff = paired_difference(visual.paired, blind.paired, n_resamples=n_resamples, seed=seed,
                                 names=("visual", "blind"))
        ci = diff["ci95_bootstrap"] or [None, None]
        visual.secondary.update({"mg": diff["difference"], "mg_ci95_low": ci[0], "mg_ci95_high": ci[1],
                                 "mg_pvalue": diff["pvalue"]})
        found = True
    return found


def build_leaderboard(submissions: Iterable[str | os.PathLike | Mapping], data: Mapping[str, BenchmarkData], *,
                      n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = DEFAULT_SEED,
                      alpha: float = DEFAULT_ALPHA) -> list[Board]:
    """Validate every submission against its benchmark's data, then score, rank and test them.

    ``submissions``: file paths or submission values. ``data``: benchmark ->
    :class:`~.data.BenchmarkData`. Returns one :class:`Board` per benchmark
    present, in the order MedHorizon, Sureon, SurgHiBench. Any invalid
    submission (one on another data version included) -> DataError listing
    every problem of every submission, each prefixed by its file.
    """
    if not (isinstance(n_resamples, int) and n_resamples >= 1):
        raise DataError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if not 0 < alpha < 1:
        raise DataError(f"alpha must be between 0 and 1, got {alpha!r}")
    problems: list[str] = []
    valid: dict[str, list[Submission]] = {}
    subs = list(submissions)
    if not subs:
        raise DataError("no submissions given")
    for k, s in enumerate(subs):
        source = str(s) if isinstance(s, (str, os.PathLike)) else f"submission #{k + 1}"
        try:
            obj = read_submission(s) if isinstance(s, (str, os.PathLike)) else s
        except DataError as exc:
            problems.extend(f"{source}: {p}" for p in exc.problems)
            continue
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        bench = meta.get("benchmark") if isinstance(meta, dict) else None
        bdata = data.get(bench) if isinstance(bench, str) else None
        if bench in BENCHMARKS and bdata is None:
            given = [b for b in BENCHMARKS if b in data]
            wrong = f"this is a {bench} submission, not {' or '.join(given)}: " if given else ""
            problems.append(f"{source}: {wrong}no data given for benchmark {bench} (pass --data {bench}=PATH)")
            continue
        try:
            sub = validate_submission(obj, bdata, source=source)
        except DataError as exc:
            problems.extend(f"{source}: {p}" for p in exc.problems)
            continue
        valid.setdefault(sub.benchmark, []).append(sub)
    # Validation checks each version against the data given, so one board never mixes versions;
    # say so plainly if a caller passed data objects that disagree.
    for bench, group in valid.items():
        versions = {s.metadata["data_version"] for s in group}
        if len(versions) > 1:
            problems.append(f"{bench}: submissions on different data versions ({', '.join(sorted(versions))}) "
                            "are not comparable")
    if problems:
        raise DataError(problems, source="leaderboard: refused, invalid submission(s)")
    return [rank_board(b, data[b], [score_entry(s, data[b], n_resamples=n_resamples, seed=seed) for s in valid[b]],
                       n_resamples=n_resamples, seed=seed, alpha=alpha) for b in BENCHMARKS if b in valid]
