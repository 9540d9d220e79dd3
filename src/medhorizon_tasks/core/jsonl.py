"""Reading and writing JSON Lines with line-numbered errors.

The implementation is :mod:`.safeio` (the package's one reading / writing layer); these names stay
here so that existing callers and users' scripts keep working.
"""

from __future__ import annotations

from .safeio import append_jsonl, iter_jsonl
from .safeio import atomic_write_jsonl as write_jsonl

__all__ = ["iter_jsonl", "append_jsonl", "write_jsonl"]
