"""MedHorizon's task taxonomy (paper section 3.3, Fig. 5, Table 2, appendix 6.3).

Thirteen task codes in two families. Semantic-reasoning tasks are stratified by
hop depth: one-hop IR; two-hop WR, RSR; three-hop CPR, LA. Fine-grained tasks
have no hop depth (``hop`` is ``None`` for them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FINE_GRAINED = "fine_grained"
SEMANTIC_REASONING = "semantic_reasoning"
FAMILIES = (FINE_GRAINED, SEMANTIC_REASONING)


@dataclass(frozen=True)
class TaskType:
    code: str
    name: str
    family: str
    hop: int | None
    aliases: tuple[str, ...] = ()


# Order = the column order of the paper's Table 2.
TASK_TYPES: tuple[TaskType, ...] = (
    TaskType("PR", "Phase Recognition", FINE_GRAINED, None, ("procedural phase recognition",)),
    TaskType("SD", "Step Discrimination", FINE_GRAINED, None, ("step recognition",)),
    TaskType("RL", "Region Localization", FINE_GRAINED, None, ("anatomical region localization", "region localisation")),
    TaskType("BPQ", "Bowel Preparation Quality", FINE_GRAINED, None, ("bowel preparation quality assessment",)),
    TaskType("LLS", "Largest Lesion Size", FINE_GRAINED, None, ("largest lesion identification", "largest-lesion identification", "largest lesion")),
    TaskType("Site", "Lesion Site Binding", FINE_GRAINED, None, ("site", "lesion site")),
    TaskType("Hist", "Lesion Histology Binding", FINE_GRAINED, None, ("hist", "histology", "lesion histology")),
    TaskType("Size", "Lesion Size Binding", FINE_GRAINED, None, ("size", "lesion size")),
    TaskType("IR", "Instrument Recognition", SEMANTIC_REASONING, 1, ()),
    TaskType("WR", "Workload Ranking", SEMANTIC_REASONING, 2, ()),
    TaskType("RSR", "Ranked Step Retrieval", SEMANTIC_REASONING, 2, ()),
    TaskType("CPR", "Count-Proportion Reasoning", SEMANTIC_REASONING, 3, ("count proportion reasoning",)),
    TaskType("LA", "Lesion Analysis", SEMANTIC_REASONING, 3, ()),
)
TASK_CODES: tuple[str, ...] = tuple(t.code for t in TASK_TYPES)
_BY_CODE = {t.code: t for t in TASK_TYPES}

# The eight source datasets (paper Table 4), canonical spelling.
SOURCES: tuple[str, ...] = (
    "AutoLaparo", "Galar", "GraSP", "MultiBypass", "PitVQA", "REAL-Colon", "TMVP", "US-Study",
)


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", " ", s.strip().lower())


_LOOKUP: dict[str, TaskType] = {}
for _t in TASK_TYPES:
    for _k in (_t.code, _t.name, *_t.aliases):
        _LOOKUP[_norm(_k)] = _t


def resolve_task(value: object) -> TaskType | None:
    """The task type for a code ("PR", "pr") or a name ("Phase Recognition"); None if unknown."""
    if not isinstance(value, str) or not value.strip():
        return None
    return _LOOKUP.get(_norm(value))


def task_type(code: str) -> TaskType:
    return _BY_CODE[code]
