"""The files of a VLMEvalKit run that this package reads and writes, beside ``<model>_<dataset>.tsv``.

- ``<model>_<dataset>.tsv``: VLMEvalKit's predictions, read by :func:`read_predictions` exactly as written;
- ``<model>_<dataset>_video_outcomes.jsonl``: :class:`~.frames.OutcomeLog`;
- ``<model>_<dataset>_records.jsonl``: the package's per-item records (``medhorizon-tasks`` reports read them);
- ``<model>_<dataset>_report.json``: the benchmark's report (``medhorizon-tasks score``'s);
- ``<model>_<dataset>_medhorizon_stamp.json``: what made the predictions (:mod:`.stamp`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import MedHorizonError

__all__ = ["read_predictions", "records_path", "report_path"]


def _beside(prediction_file: str | os.PathLike, suffix: str) -> Path:
    p = Path(prediction_file)
    return p.with_name(p.stem + suffix)


def records_path(prediction_file: str | os.PathLike) -> Path:
    return _beside(prediction_file, "_records.jsonl")


def report_path(prediction_file: str | os.PathLike) -> Path:
    return _beside(prediction_file, "_report.json")


def read_predictions(prediction_file: str | os.PathLike) -> dict[int, str]:
    """``index -> the model's text`` exactly as VLMEvalKit wrote it (no NA parsing, no type guessing)."""
    import pandas as pd

    path = Path(prediction_file)
    if path.suffix.lower() != ".tsv":
        raise MedHorizonError(f"{path}: predictions must be a TSV file (PRED_FORMAT=tsv; the launcher sets it): "
                              "xlsx turns '', 'NA', 'None' into empty cells, '=A+1' into a formula and cuts text "
                              "longer than 32,767 characters")
    frame = pd.read_csv(path, sep="\t", keep_default_na=False, dtype=str)
    if "index" not in frame or "prediction" not in frame:
        raise MedHorizonError(f"{path}: not a VLMEvalKit prediction file (no 'index' and 'prediction' columns)")
    return {int(i): p for i, p in zip(frame["index"], frame["prediction"])}
