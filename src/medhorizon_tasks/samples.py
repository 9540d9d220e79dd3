"""Lines of an lmms-eval ``--log_samples`` file, read as plain JSON (no lmms-eval import)."""

from __future__ import annotations


def is_lmms_sample(rec) -> bool:
    """Whether a JSON line looks like an lmms-eval sample (``doc_id`` and the model's responses)."""
    return isinstance(rec, dict) and "doc_id" in rec and ("resps" in rec or "filtered_resps" in rec)


def _first_text(value):
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def response_text(rec: dict) -> str | None:
    """The model's text in a sample: the filtered response if lmms-eval logged one, else the raw one."""
    if rec.get("filtered_resps") is not None:
        return _first_text(rec.get("filtered_resps"))
    return _first_text(rec.get("resps"))
