"""Sureon: surgical video reasoning (10 categories; 7-option MCQ, temporal ordering, judged summaries).

Framework-free core: :mod:`.items` (categories, item loader) and :mod:`.scoring`
(answer extraction, per-item records, the mu / perception / reasoning / SM / MG report).
"""

from .items import CATEGORIES, CATEGORY_CODES, Category, SureonItem, load_items, resolve_category
from .scoring import extract_order, format_report, read_predictions, report, score_item, score_predictions

__all__ = ["CATEGORIES", "CATEGORY_CODES", "Category", "SureonItem", "load_items", "resolve_category",
           "extract_order", "format_report", "read_predictions", "report", "score_item", "score_predictions"]
