"""Documented shim: ``medhorizon_tasks.extract.extract_choice`` / ``strip_reasoning``.

The rule lives in :mod:`medhorizon_tasks.core.extract`; this name is kept because
the README and users' scripts cite it.
"""

from .core.extract import STATUSES, Extraction, extract_choice, letters_for, strip_reasoning

__all__ = ["Extraction", "extract_choice", "strip_reasoning", "letters_for", "STATUSES"]
