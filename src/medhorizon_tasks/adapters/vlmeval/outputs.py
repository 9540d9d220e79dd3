"""The files of a VLMEvalKit run that this package reads and writes, beside ``<model>_<dataset>.tsv``.

- ``<model>_<dataset>.tsv``: VLMEvalKit's predictions, read by :func:`read_predictions` exactly as written;
- ``<model>_<dataset>_video_outcomes.jsonl``: :class:`~.frames.OutcomeLog`;
- ``<model>_<dataset>_records.jsonl``: the package's per-item records (``medhorizon-tasks`` reports read them);
- ``<model>_<dataset>_report.json``: the benchmark's report (``medhorizon-tasks score``'s);
- ``<model>_<dataset>_medhorizon_stamp.json``: what made the predictions (:mod:`.stamp`).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ...core.errors import DataError, MedHorizonError
from ...core.safeio import read_text

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
    text = read_text(path)  # DataError: missing, a folder, not UTF-8 (with its line)
    try:
        # pandas, as VLMEvalKit writes it (no field size limit: a model may answer with 200 KB)
        frame = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False, dtype=str)
    except pd.errors.EmptyDataError:
        raise DataError("empty file: not a VLMEvalKit prediction file", source=str(path)) from None
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise DataError(f"not a readable TSV file ({type(exc).__name__}: {first})", source=str(path)) from None
    if "index" not in frame.columns or "prediction" not in frame.columns:
        raise DataError("not a VLMEvalKit prediction file (no 'index' and 'prediction' columns)", source=str(path))
    out: dict[int, str] = {}
    for row, (index, prediction) in enumerate(zip(frame["index"], frame["prediction"]), 1):
        try:
            number = int(index)
        except ValueError:
            raise DataError(f"row {row}: field 'index': {index[:40]!r} is not a row number", source=str(path)) from None
        if number in out:
            raise DataError(f"row {row}: field 'index': {number} is given twice", source=str(path))
        out[number] = prediction
    return out
