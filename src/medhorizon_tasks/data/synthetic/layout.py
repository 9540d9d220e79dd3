"""What the synthetic MedHorizon benchmark holds: its tasks, sources and fixed video layout.

Sixteen videos, two per source, each with the task codes of its questions
(:data:`_VIDEO_LAYOUT`); the seed drives only what :mod:`.questions` draws
from it, never the layout itself. This is the lowest of the benchmark's
modules: the planner (:mod:`.questions`) and the builder (:mod:`.medhorizon`)
both read it. They read ``GENERATOR_VERSION`` and ``_VIDEO_LAYOUT`` as
``layout.NAME`` at call time, so that replacing one here (as the tests do,
with a tiny layout or the next version) reaches the plan and the build alike.
"""

from __future__ import annotations

from ...benchmarks.medhorizon.taxonomy import FINE_GRAINED, TASK_TYPES

GENERATOR_VERSION = 2
LETTERS = "ABCD"

FINE = "Fine-grained Understanding"
SEMANTIC = "Semantic Reasoning"

# code -> (task name, task class, category); names and families come from the taxonomy.
_CATEGORIES = {
    "PR": "Procedure Workflow", "SD": "Procedure Workflow", "RL": "Anatomy", "BPQ": "Quality Assessment",
    "LLS": "Lesion", "Site": "Lesion", "Hist": "Lesion", "Size": "Lesion", "IR": "Instrument",
    "WR": "Workflow Reasoning", "RSR": "Workflow Reasoning", "CPR": "Quantitative Reasoning", "LA": "Lesion",
}
SYNTHETIC_TASKS: dict[str, tuple[str, str, str]] = {
    t.code: (t.name, FINE if t.family == FINE_GRAINED else SEMANTIC, _CATEGORIES[t.code]) for t in TASK_TYPES
}
_LESION_TASKS = {"LLS", "Site", "Hist", "Size", "LA"}
_GLOBAL_TASKS = {"WR", "RSR", "CPR"}

# source -> (organ, scene_type, background style)
SYNTHETIC_SOURCES: dict[str, tuple[str, str, str]] = {
    "AutoLaparo": ("uterus", "surgery", "surgical"),
    "Galar": ("gastrointestinal tract", "examination", "surgical"),
    "GraSP": ("prostate", "surgery", "surgical"),
    "MultiBypass": ("stomach", "surgery", "surgical"),
    "PitVQA": ("pituitary", "surgery", "surgical"),
    "REAL-Colon": ("colon", "examination", "surgical"),
    "TMVP": ("heart", "surgery", "surgical"),
    "US-Study": ("lung", "examination", "ultrasound"),
}

_SHORT = (128, 96, 5.0)  # width, height, fps
_LONG = (64, 48, 2.0)

# (source, index, minutes, (w, h, fps), tasks). Fixed layout; the seed drives
# the questions' order, options, answers, tags and evidence placement.
_VIDEO_LAYOUT: tuple[
    tuple[str, int, float, tuple[int, int, float], tuple[str, ...]], ...
] = (
    ("AutoLaparo", 0, 6, _SHORT, ("PR", "SD", "IR", "WR", "CPR")),
    ("AutoLaparo", 1, 4, _SHORT, ("PR", "SD", "IR", "RSR", "CPR")),
    ("Galar", 0, 5, _SHORT, ("RL", "BPQ", "LLS", "Site", "Hist", "Size")),
    ("Galar", 1, 90, _LONG, ("RL", "BPQ", "LLS", "Hist", "Size", "LA")),
    ("GraSP", 0, 3, _SHORT, ("PR", "IR", "RSR", "CPR")),
    ("GraSP", 1, 75, _LONG, ("PR", "SD", "IR", "WR", "RSR", "CPR")),
    ("MultiBypass", 0, 7, _SHORT, ("PR", "SD", "WR", "RSR", "CPR")),
    ("MultiBypass", 1, 60, _LONG, ("PR", "SD", "IR", "WR", "RSR")),
    ("PitVQA", 0, 5, _SHORT, ("PR", "SD", "IR", "RSR", "WR")),
    ("PitVQA", 1, 3, _SHORT, ("PR", "SD", "IR", "WR")),
    ("REAL-Colon", 0, 8, _SHORT, ("BPQ", "LLS", "Site", "Hist", "Size", "CPR")),
    ("REAL-Colon", 1, 12, _SHORT, ("BPQ", "LLS", "Site", "Hist", "Size", "LA")),
    ("TMVP", 0, 4, _SHORT, ("PR", "SD", "IR", "CPR", "WR")),
    ("TMVP", 1, 2, _SHORT, ("PR", "SD", "IR", "CPR")),
    ("US-Study", 0, 2, _SHORT, ("RL", "Site", "LA", "CPR")),
    ("US-Study", 1, 3, _SHORT, ("RL", "LA", "CPR", "PR")),
)
# Edge cases: the long video whose last window ends on its very last frame,
# and the short video whose first-half window starts at frame 0.
_ENDS_ON_LAST_FRAME = "syn-galar-01"
# Videos that get one extra order-dependent question (task RSR): two evidence
# windows carry different codes, and the answer is the code of the window that
# comes FIRST in time; the question is marked "[probe #N first-seen]" so the
# needle probe answers with the first code it sees. Reversing or shuffling the
# frame order then breaks exactly these items.
_ORDER_VIDEOS = frozenset({"syn-autolaparo-01", "syn-grasp-00", "syn-multibypass-00", "syn-pitvqa-01",
                           "syn-tmvp-00", "syn-tmvp-01", "syn-us_study-00", "syn-us_study-01"})
ORDER_MARK = "first-seen"
_STARTS_AT_FRAME_0 = "syn-us_study-00"


def _slug(source: str) -> str:
    return source.lower().replace("-", "_")


def _video_spec(key: str) -> tuple[int, int, float, str, int]:
    """(width, height, fps, style, layout position) of a planned video."""
    for pos, (source, index, _minutes, (w, h, fps), _tasks) in enumerate(_VIDEO_LAYOUT):
        if key == f"syn-{_slug(source)}-{index:02d}":
            return w, h, fps, SYNTHETIC_SOURCES[source][2], pos
    raise KeyError(key)
