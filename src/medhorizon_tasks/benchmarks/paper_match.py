"""Whether a run may stand beside a paper's row: the paper's data, every item answered, the paper's protocol.

A paper's number describes its own data under its own protocol, so a run is set beside a published row
(``score --paper-row``, ``leaderboard build``) only under these rules, one function each:

* **the data are the paper's**, else the comparison is *refused*, with the reason
  (:func:`data_problems`): MedHorizon, a release with the published counts (1,253 items over 340
  videos, and the per-task, per-answer, per-source counts; paper Table 3, Table 4, appendix 6.3, as
  :func:`~.medhorizon.release_check.check_release` checks them); Sureon, 340 questions of which 299 are
  accuracy-scored (abstract: "a benchmark of 340 questions"; appendix D.1: "the 299 accuracy-scored
  items"); SurgHiBench, a dataset the paper reports, by name, and for its "Overall" rows exactly the
  paper's datasets (the paper's Overall is their unweighted mean). The synthetic sets and the samples
  never pass: their counts and dataset names are not the paper's. (The papers publish no hash of their
  data, so counts and names are what can be checked.)
* **every item has a prediction**, else the comparison is shown *flagged* (:func:`missing_flag`): an
  item without one is scored wrong, so the number is not the model's on the paper's data.
* **the paper's protocol**, else *flagged*, each departure named (:func:`departure_flags`): Sureon's
  visual mode without the blurring pass, another frame setting than the paper's row, another answer
  extraction rule than the paper's numbers came from.

A flagged comparison is printed and written with its flags; a refused one only says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["PaperCheck", "SUREON_PUBLISHED", "data_problems", "surghi_dataset_problems", "missing_flag",
           "departure_flags", "paper_datasets", "board_problems", "NO_BLUR"]

SUREON_PUBLISHED = {"items": 340, "accuracy_scored": 299}  # abstract; appendix D.1
NO_BLUR = "no blur"  # Sureon's visual mode without the blurring pass (appendix D.1 blurs text and faces)


@dataclass
class PaperCheck:
    """What stands between a run and a paper's row: ``refused`` (the data are not the paper's: no
    comparison) and ``flags`` (shown, but not the paper's number as printed)."""

    refused: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"refused": list(self.refused), "flags": list(self.flags)}


def _norm(name: str) -> str:
    return re.sub(r"[\W_]", "", name.casefold())


def data_problems(benchmark: str, items: list) -> list[str]:
    """Why ``items`` (MedHorizon release items, Sureon items) are not the paper's data; empty when they are."""
    if benchmark == "medhorizon":
        from .medhorizon.release_check import PUBLISHED, check_release, synthetic_description

        check = check_release(items)
        if check.matches:
            return []
        if check.synthetic:
            return [f"the data are {synthetic_description(check.n_items, check.n_videos)}"]
        subset = " (every count at or below the published one: a partial download, or other items)"
        return [f"the data are not the published release: {check.n_items:,} items over {check.n_videos:,} videos, "
                f"published {PUBLISHED['items']:,} over {PUBLISHED['videos']:,} (paper Table 3; first difference: "
                f"{check.differences[0]}){subset if check.subset else ''}"]
    if benchmark == "sureon":
        scored = sum(1 for it in items if it.kind != "sm")
        if len(items) == SUREON_PUBLISHED["items"] and scored == SUREON_PUBLISHED["accuracy_scored"]:
            return []
        return [f"the data are not the paper's benchmark: {len(items):,} questions, {scored:,} accuracy-scored; "
                f"published {SUREON_PUBLISHED['items']} questions, {SUREON_PUBLISHED['accuracy_scored']} "
                "accuracy-scored (abstract, appendix D.1)"]
    raise ValueError(f"data_problems: no item counts for {benchmark!r} (SurgHiBench: surghi_dataset_problems)")


def surghi_dataset_problems(dataset: str, run_datasets: Iterable[str], paper_datasets: Iterable[str],
                            overall_datasets: Iterable[str] | None = None) -> list[str]:
    """Why SurgHiBench's row of ``dataset`` (``"Overall"`` or a dataset) does not describe this run's data:
    a dataset the paper does not report, or an Overall over other datasets than the paper's Overall is over
    (``overall_datasets``, default ``paper_datasets``: the supplement reports datasets its Overall leaves out)."""
    paper = sorted(paper_datasets)
    mine = sorted(run_datasets)
    if _norm(dataset) != "overall":
        if _norm(dataset) in {_norm(d) for d in paper}:
            return []
        return [f"dataset {dataset} is not one of the paper's ({', '.join(paper)})"]
    paper = sorted(paper if overall_datasets is None else overall_datasets)
    if {_norm(d) for d in mine} == {_norm(d) for d in paper}:
        return []
    return [f"the paper's Overall is the mean over {', '.join(paper)}; this run's datasets are "
            f"{', '.join(mine) or 'none'}"]


def paper_datasets(overall: bool = False) -> list[str]:
    """The datasets SurgHiBench's tables report; with ``overall``, those of the tables that have an "Overall"
    row, which is the unweighted mean over them (Tables 2-4; the supplement's Table 8 adds phase-only datasets
    and has no Overall)."""
    from .published import published_rows

    rows = published_rows("surghi")
    with_overall = {r.table for r in rows if r.setting.get("dataset") == "Overall"}
    names = {r.setting.get("dataset") for r in rows if not overall or r.table in with_overall}
    return sorted(n for n in names if n and n != "Overall")


def board_problems(data) -> list[str]:
    """Why a leaderboard's data (:class:`~.data.BenchmarkData`) are not its paper's: its entries' headlines
    (MedHorizon and Sureon overall accuracy, SurgHiBench's Overall multi-level) are then not set beside any
    published row."""
    if data.benchmark == "surghi":
        return surghi_dataset_problems("Overall", data.hierarchies, paper_datasets(), paper_datasets(overall=True))
    return data_problems(data.benchmark, data.items)


def missing_flag(n_missing: int, n: int | None = None, unit: str = "item") -> list[str]:
    """The flag of a run with items that have no prediction (scored wrong), or nothing."""
    if not n_missing:
        return []
    of = f" of {n:,}" if n else ""
    return [f"{n_missing:,}{of} {unit}s have no prediction (scored wrong): not the model's number on the "
            "paper's data"]


def departure_flags(departures: Iterable[str]) -> list[str]:
    """One flag per protocol departure of the run (``"no blur"``, ``"1 FPS, cap 64"``...)."""
    return [f"not the paper's protocol: {d}" for d in dict.fromkeys(departures)]
