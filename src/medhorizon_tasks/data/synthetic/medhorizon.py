"""A small synthetic benchmark in the MedHorizon release layout.

The real MedHorizon release is a JSONL file with one record per *video* and
its four-way multiple-choice questions nested under ``qa``; the evidence for
each answer lies in a few tiny frame windows of a full-length clinical video.
This module generates, deterministically and in a few seconds, a stand-in with
the same layout whose answers are *drawn into the frames*: every frame of a
question's evidence window is :func:`~medhorizon_tasks.data.synthetic.visual_code.encode_code`
``(tag, answer_index)`` and every other frame is background, on which
:func:`~medhorizon_tasks.data.synthetic.visual_code.decode_code` returns ``None``. A probe
program that reads the sampled frames therefore answers a question correctly
exactly when the frame sampler delivered one of its evidence frames. Each
question's text ends with `` [probe #<tag>]`` so the probe knows which code
belongs to which question.

Contents (16 videos, 80 questions):

* 2 videos for each of the 8 sources (AutoLaparo, Galar, GraSP, MultiBypass,
  PitVQA, REAL-Colon, TMVP, US-Study);
* 12 short videos (2-8 min) and one 12 min video at 128x96, 5 fps, and three
  long ones (60, 75, 90 min) at 64x48, 2 fps - so all three duration tiers
  (``<10min``, ``10-60min``, ``>=1h``) occur;
* all 13 task codes, >= 4 questions each; answers balanced over A-D; options
  as a plain list of 4 strings, or for every 7th question as a mapping
  ``{"A": "A. ...", ...}``;
* evidence windows of 3-8 s (1 or 2 per question, never overlapping within a
  video); each long video has a window in its last tenth (one ends on the very
  last frame) and every video one in its first half (one starts at frame 0);
  in the long videos every question's evidence is < 0.5% of the frames.

Use :func:`build_synthetic` (cached, multi-process safe) to get the files and
:func:`plan_synthetic` for the JSONL records alone (pure, cheap).

A build's ``manifest.json`` lists every file the builder wrote (``files``),
and a rebuild (another seed or generator version, or ``force``) removes or
replaces only those: files beside the build (a notes file, the Sureon and
SurgHiBench samples that default to sub-folders of the same folder) are kept,
and one inside the build's own entries (``videos/``) makes the build refuse
with a :class:`~medhorizon_tasks.core.errors.DataError` naming it, touching
nothing (see :func:`build_folder`, which those samples use too).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ...benchmarks.medhorizon.taxonomy import FINE_GRAINED, TASK_TYPES
from ...core.errors import DataError
from .visual_code import BackgroundGenerator, encode_code

__all__ = [
    "GENERATOR_VERSION",
    "SYNTHETIC_JSONL_NAME",
    "SYNTHETIC_SOURCES",
    "SYNTHETIC_TASKS",
    "SyntheticBenchmark",
    "build_folder",
    "build_synthetic",
    "count_frames",
    "default_synthetic_dir",
    "pick_codec",
    "plan_synthetic",
    "write_video",
]

GENERATOR_VERSION = 2
GENERATOR = "medhorizon_tasks.data.synthetic"
SYNTHETIC_JSONL_NAME = "medhorizon_synthetic.jsonl"
MANIFEST_NAME = "manifest.json"
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

_MIN_WINDOW_S, _MAX_WINDOW_S = 3.0, 8.0
_GAP_S = 2.0  # background seconds kept between windows of different questions
_LONG_SPARSITY_LIMIT = 0.005


# ---------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------

_PHASES = {
    "AutoLaparo": [
        "Preparation",
        "Dividing ligament and peritoneum",
        "Dividing uterine vessels and ligament",
        "Transecting the vagina",
        "Specimen removal",
        "Suturing",
        "Washing",
    ],
    "GraSP": [
        "Idle",
        "Left pelvic isolated lymphadenectomy",
        "Right pelvic isolated lymphadenectomy",
        "Developing the space of Retzius",
        "Ligation of the deep dorsal venous complex",
        "Bladder neck identification and transection",
        "Seminal vesicle dissection",
        "Development of the plane between the prostate and rectum",
        "Prostatic pedicle control",
        "Severing of the prostate from the urethra",
        "Bladder neck reconstruction",
    ],
    "MultiBypass": [
        "Preparation",
        "Gastric pouch creation",
        "Omentum division",
        "Gastrojejunal anastomosis",
        "Anastomosis test",
        "Jejunal separation",
        "Petersen space closure",
        "Jejunojejunal anastomosis",
        "Mesenteric defect closure",
        "Cleaning and coagulation",
    ],
    "PitVQA": ["Nasal phase", "Sphenoid phase", "Sellar phase", "Closure phase"],
    "TMVP": [
        "Access and exposure",
        "Cannulation",
        "Atriotomy",
        "Valve inspection",
        "Leaflet repair",
        "Annuloplasty ring implantation",
        "Saline testing",
        "Closure",
    ],
    "US-Study": [
        "Anterior zone survey",
        "Lateral zone survey",
        "Posterior zone survey",
        "Diaphragm assessment",
        "Pleural sliding check",
    ],
}
_SURGICAL_STEPS = [
    "Blunt dissection",
    "Sharp dissection",
    "Clipping",
    "Cutting",
    "Coagulation",
    "Suturing",
    "Knot tying",
    "Retraction",
    "Irrigation",
    "Suction",
    "Specimen extraction",
    "Stapling",
]
_STEPS = {
    "PitVQA": [
        "Nasal septum dissection",
        "Sphenoidotomy",
        "Septum removal",
        "Sellotomy",
        "Durotomy",
        "Tumour excision",
        "Haemostasis",
        "Synthetic graft placement",
        "Fat graft placement",
        "Dural sealant application",
    ],
    "US-Study": [
        "Probe placement",
        "Depth adjustment",
        "M-mode acquisition",
        "Zone sweep",
        "Image freeze",
    ],
}
_INSTRUMENTS = [
    "Grasping forceps",
    "Bipolar forceps",
    "Monopolar hook",
    "Scissors",
    "Needle driver",
    "Clip applier",
    "Suction irrigator",
    "Prograsp forceps",
    "Stapler",
    "Ultrasonic shears",
    "Vessel sealer",
    "Specimen bag",
]
_INSTRUMENTS_BY_SOURCE = {
    "PitVQA": [
        "Rongeur",
        "Kerrisons",
        "Ring curette",
        "Suction",
        "Freer elevator",
        "Dissector",
        "Drill",
        "Cottle",
        "Bipolar forceps",
        "Scissors",
    ],
}
_REGIONS = {
    "Galar": [
        "Esophagus",
        "Stomach",
        "Pylorus",
        "Duodenum",
        "Jejunum",
        "Ileum",
        "Ileocecal valve",
        "Colon",
    ],
    "REAL-Colon": [
        "Cecum",
        "Ascending colon",
        "Hepatic flexure",
        "Transverse colon",
        "Splenic flexure",
        "Descending colon",
        "Sigmoid colon",
        "Rectum",
    ],
    "US-Study": [
        "Right anterior upper zone",
        "Right anterior lower zone",
        "Right lateral basal zone",
        "Right posterior lower zone",
        "Left anterior upper zone",
        "Left anterior lower zone",
        "Left lateral basal zone",
        "Left posterior lower zone",
    ],
}
_BPQ = {
    "REAL-Colon": [
        "BBPS 0 - unprepared segment",
        "BBPS 1 - portions not seen",
        "BBPS 2 - minor residue",
        "BBPS 3 - entire mucosa well seen",
    ],
    "Galar": [
        "Clean mucosa",
        "Slightly obscured by residue",
        "Moderately obscured by residue",
        "Heavily obscured by residue",
    ],
}
_SIZE_BINS = [
    "Diminutive (<5 mm)",
    "Small (5-9 mm)",
    "Large (10-19 mm)",
    "Very large (>=20 mm)",
]
_SIZES_MM = [
    "2 mm",
    "3 mm",
    "4 mm",
    "5 mm",
    "6 mm",
    "8 mm",
    "10 mm",
    "12 mm",
    "15 mm",
    "20 mm",
    "25 mm",
    "30 mm",
]
_SIZES_CM = ["0.5 cm", "1 cm", "1.5 cm", "2 cm", "2.5 cm", "3 cm", "4 cm", "5 cm"]
_HIST = {
    "REAL-Colon": [
        "Tubular adenoma",
        "Tubulovillous adenoma",
        "Hyperplastic polyp",
        "Sessile serrated lesion",
        "Traditional serrated adenoma",
        "Inflammatory polyp",
        "Adenocarcinoma",
    ],
    "Galar": [
        "Angiectasia",
        "Ulcer",
        "Erosion",
        "Polyp",
        "Lymphangiectasia",
        "Fresh blood",
        "Stenosis",
    ],
}
_US_FINDINGS = [
    "A-line pattern",
    "Multiple B-lines",
    "Subpleural consolidation",
    "Consolidation with air bronchograms",
    "Pleural effusion",
    "Pleural line irregularity",
    "Lung point",
]
_LA = {
    "REAL-Colon": [
        "Single diminutive hyperplastic polyp; no surveillance change",
        "One adenoma <10 mm; surveillance in 7-10 years",
        "Three to four adenomas <10 mm; surveillance in 3-5 years",
        "Adenoma >=10 mm; surveillance in 3 years",
        "Sessile serrated lesion >=10 mm; surveillance in 3 years",
        "Suspected carcinoma; refer for staging",
    ],
    "Galar": [
        "Isolated small-bowel angiectasia; consider enteroscopy",
        "Multiple small-bowel erosions; likely NSAID-related",
        "Active bleeding source in jejunum; urgent enteroscopy",
        "Ulcerated stenosis; suspected Crohn's disease",
        "No significant findings; reassure",
        "Single polyp in ileum; elective resection",
    ],
    "US-Study": [
        "Normal aeration in all zones",
        "Interstitial syndrome with bilateral B-lines",
        "Lobar consolidation, right base",
        "Small left pleural effusion without consolidation",
        "Focal B-lines with pleural irregularity",
        "Pneumothorax with a lung point",
    ],
}
_COUNTS = ["1", "2", "3", "4", "5", "6", "7", "8"]
_PROPORTIONS = [
    "About 10%",
    "About 25%",
    "About 40%",
    "About 50%",
    "About 60%",
    "About 75%",
    "About 90%",
]


def _vocab(task: str, source: str) -> list[str]:
    if task == "PR":
        return _PHASES[source]
    if task == "SD":
        return _STEPS.get(source, _SURGICAL_STEPS)
    if task == "IR":
        return _INSTRUMENTS_BY_SOURCE.get(source, _INSTRUMENTS)
    if task == "RL":
        return _REGIONS[source]
    if task == "BPQ":
        return _BPQ[source]
    if task == "LLS":
        return _SIZE_BINS
    if task == "Site":
        return _REGIONS["REAL-Colon" if source == "REAL-Colon" else source]
    if task == "Hist":
        return _HIST[source]
    if task == "Size":
        return _SIZES_MM
    if task == "LA":
        return _LA[source]
    if task == "CPR":
        return _PROPORTIONS if source in ("US-Study", "REAL-Colon") else _COUNTS
    raise KeyError(task)


def _ranking_options(rng: np.random.Generator, items: list[str]) -> list[str]:
    """Four distinct orderings of three distinct items, as 'a > b > c'."""
    chosen = [items[i] for i in rng.choice(len(items), size=3, replace=False)]
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    picks = rng.choice(len(perms), size=4, replace=False)
    return [" > ".join(chosen[j] for j in perms[p]) for p in picks]


def _question_text(task: str, source: str, rng: np.random.Generator) -> str:
    procedure = {
        "AutoLaparo": "laparoscopic hysterectomy",
        "GraSP": "robot-assisted radical prostatectomy",
        "MultiBypass": "laparoscopic Roux-en-Y gastric bypass",
        "PitVQA": "endoscopic pituitary surgery",
        "TMVP": "minimally invasive mitral valve repair",
        "REAL-Colon": "colonoscopy",
        "Galar": "capsule endoscopy",
        "US-Study": "lung ultrasound study",
    }[source]
    ordinal = ["first", "second", "third"][int(rng.integers(0, 3))]
    templates = {
        "PR": [
            f"Which surgical phase of this {procedure} is shown when the highlighted event occurs?",
            f"During the {procedure}, which phase is in progress at the moment the marked view appears?",
        ],
        "SD": [
            f"Which step is being performed in the marked segment of this {procedure}?",
            f"Which of the following steps best describes the action in the marked segment of the {procedure}?",
        ],
        "RL": [
            f"In which anatomical region is the camera located when the marked finding is visible in this {procedure}?",
            f"Which region is being examined at the marked moment of this {procedure}?",
        ],
        "BPQ": [
            f"What is the bowel preparation quality in the marked segment of this {procedure}?",
            f"How would you grade the bowel cleansing where the marked view occurs in this {procedure}?",
        ],
        "LLS": [
            f"What is the size category of the largest lesion detected during this {procedure}?",
            f"Among all lesions found in this {procedure}, how large is the largest one?",
        ],
        "Site": [
            f"Where was the {ordinal} lesion of this {procedure} located?",
            f"At which site was the lesion later reported in the pathology found during this {procedure}?",
        ],
        "Hist": [
            f"What is the histology (finding type) of the {ordinal} lesion detected in this {procedure}?",
            f"Which diagnosis corresponds to the lesion seen at the marked moment of this {procedure}?",
        ],
        "Size": [
            f"What is the estimated size of the {ordinal} lesion detected in this {procedure}?",
            f"How large is the lesion visible at the marked moment of this {procedure}?",
        ],
        "IR": [
            f"Which instrument is used in the marked segment of this {procedure}?",
            f"Which instrument is introduced right after the marked event of this {procedure}?",
        ],
        "WR": [
            f"Rank the following instruments by total usage time across the whole {procedure} (most to least).",
            f"Which ordering of instruments by workload over the entire {procedure} is correct?",
        ],
        "RSR": [
            f"Rank these steps by total duration in this {procedure} (longest first).",
            f"Which ordering of steps by their share of the {procedure} is correct?",
        ],
        "CPR": [
            f"Counting across the whole {procedure}, what is the answer to the marked count/proportion query?",
            f"Over the full {procedure}, how often does the marked event occur (count or proportion)?",
        ],
        "ORDER": [
            f"Which of these events is seen first in this {procedure}?",
            f"Of the following, which event occurs earliest in this {procedure}?",
        ],
        "LA": [
            f"Considering all findings of this {procedure}, which overall assessment is correct?",
            f"Which summary best integrates the findings of this {procedure}?",
        ],
    }[task]
    return templates[int(rng.integers(0, len(templates)))]


def _options_for(task: str, source: str, rng: np.random.Generator) -> list[str]:
    if task == "WR":
        pool = _INSTRUMENTS_BY_SOURCE.get(source, _INSTRUMENTS)
        return _ranking_options(rng, pool)
    if task == "RSR":
        pool = _STEPS.get(source, _SURGICAL_STEPS)
        return _ranking_options(rng, pool)
    if task == "ORDER":
        pool = _STEPS.get(source, _SURGICAL_STEPS)
        return [pool[i] for i in rng.choice(len(pool), size=4, replace=False)]
    vocab = _vocab(task, source)
    idx = rng.choice(len(vocab), size=4, replace=False)
    return [vocab[i] for i in idx]


# ---------------------------------------------------------------------------
# Planning (pure)
# ---------------------------------------------------------------------------


def _slug(source: str) -> str:
    return source.lower().replace("-", "_")


def _duration_tier(seconds: float) -> str:
    if seconds < 600:
        return "<10min"
    if seconds < 3600:
        return "10-60min"
    return ">=1h"


def _overlaps(start: int, end: int, taken: list[tuple[int, int]], gap: int) -> bool:
    return any(start <= e + gap and end >= s - gap for s, e in taken)


def _place(
    rng: np.random.Generator,
    lo: int,
    hi: int,
    length: int,
    taken: list[tuple[int, int]],
    gap: int,
) -> tuple[int, int]:
    """A window of ``length`` frames with start in [lo, hi - length], not near ``taken``."""
    last_start = hi - length
    if last_start < lo:
        raise RuntimeError("no room for an evidence window")
    for _ in range(10_000):
        s = int(rng.integers(lo, last_start + 1))
        if not _overlaps(s, s + length - 1, taken, gap):
            return s, s + length - 1
    raise RuntimeError("could not place a non-overlapping evidence window")


def _window_length(rng: np.random.Generator, fps: float) -> int:
    seconds = float(rng.uniform(_MIN_WINDOW_S, _MAX_WINDOW_S))
    n = round(seconds * fps)
    return max(
        int(np.ceil(_MIN_WINDOW_S * fps)), min(n, int(np.floor(_MAX_WINDOW_S * fps)))
    )


def plan_synthetic(seed: int = 0) -> list[dict[str, Any]]:
    """The benchmark's JSONL records (one per video), a pure function of ``seed``."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, GENERATOR_VERSION])
    n_questions = sum(len(v[4]) for v in _VIDEO_LAYOUT) + len(_ORDER_VIDEOS)
    answers = np.tile(np.arange(4), (n_questions + 3) // 4)[:n_questions]
    rng.shuffle(answers)

    records: list[dict[str, Any]] = []
    uid = 0
    for source, index, minutes, (width, height, fps), tasks in _VIDEO_LAYOUT:
        organ, scene_type, _style = SYNTHETIC_SOURCES[source]
        slug = _slug(source)
        key = f"syn-{slug}-{index:02d}"
        num_frames = round(minutes * 60 * fps)
        is_long = num_frames / fps >= 3600
        gap = round(_GAP_S * fps)

        order = [tasks[i] for i in rng.permutation(len(tasks))]
        if key in _ORDER_VIDEOS:
            order.append("ORDER")
        tags = [int(t) for t in rng.choice(64, size=len(order), replace=False)]
        n_windows = [
            2 if (t in _GLOBAL_TASKS or t == "ORDER" or rng.random() < 0.2) else 1 for t in order
        ]
        lengths = [[_window_length(rng, fps) for _ in range(k)] for k in n_windows]

        # placement: the constrained windows first, then the rest anywhere.
        taken: list[tuple[int, int]] = []
        windows: list[list[tuple[int, int]]] = [[] for _ in order]
        if is_long:  # question 0's first window in the last tenth
            length = lengths[0][0]
            if key == _ENDS_ON_LAST_FRAME:
                w = (num_frames - length, num_frames - 1)
            else:
                w = _place(
                    rng, int(np.ceil(0.9 * num_frames)), num_frames, length, taken, gap
                )
            taken.append(w)
            windows[0].append(w)
        q_first_half = 1 if is_long else 0  # a window that ends in the first half
        length = lengths[q_first_half][0]
        if key == _STARTS_AT_FRAME_0:
            w = (0, length - 1)
        else:
            w = _place(rng, 0, num_frames // 2, length, taken, gap)
        taken.append(w)
        windows[q_first_half].append(w)
        for qi, lens in enumerate(lengths):
            for length in lens[len(windows[qi]) :]:
                w = _place(rng, 0, num_frames, length, taken, gap)
                taken.append(w)
                windows[qi].append(w)

        qa: list[dict[str, Any]] = []
        for qi, kind in enumerate(order):
            task = "RSR" if kind == "ORDER" else kind
            answer_index = int(answers[uid])
            options = _options_for(kind, source, rng)
            # put a randomly chosen option at the answer position
            correct = options.pop(int(rng.integers(0, 4)))
            options.insert(answer_index, correct)
            if uid % 7 == 3:
                options_field: Any = {
                    LETTERS[i]: f"{LETTERS[i]}. {o}" for i, o in enumerate(options)
                }
            else:
                options_field = options
            frame_windows = sorted(windows[qi])
            if is_long:
                covered = sum(e - s + 1 for s, e in frame_windows)
                assert covered < _LONG_SPARSITY_LIMIT * num_frames, (key, task, covered)
            if task in _GLOBAL_TASKS:
                support = "global"
            elif task in _LESION_TASKS and source in ("REAL-Colon", "Galar"):
                support = "proxy"
            else:
                support = "local"
            name, task_class, category = SYNTHETIC_TASKS[task]
            mark = f"[probe #{tags[qi]} {ORDER_MARK}]" if kind == "ORDER" else f"[probe #{tags[qi]}]"
            extra: dict[str, Any] = {}
            if kind == "ORDER":
                # the earlier window shows the answer, the later one a decoy option
                decoy = (answer_index + 1 + int(rng.integers(0, 3))) % 4
                extra["synthetic_codes"] = [[tags[qi], answer_index], [tags[qi], decoy]]
            qa.append(
                {
                    "uid": uid,
                    "question": f"{_question_text(kind, source, rng)} {mark}",
                    "options": options_field,
                    "answer": LETTERS[answer_index],
                    "task_id": task,
                    "task_name": name,
                    "task_class": task_class,
                    "category": category,
                    "evidence": {
                        "support": support,
                        "frame_windows": [[s, e] for s, e in frame_windows],
                    },
                    "synthetic_tag": tags[qi],
                    **extra,
                }
            )
            uid += 1

        records.append(
            {
                "key": key,
                "dataset": source,
                "organ": organ,
                "scene_type": scene_type,
                "duration_tier": _duration_tier(num_frames / fps),
                "video_path": f"{slug}/{key}.mp4",
                "num_frames": num_frames,
                "fps": float(fps),
                "duration_seconds": num_frames / fps,
                "split": "test",
                "qa": qa,
            }
        )
    return records


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    """The exact bytes written to the JSONL file for ``records``."""
    return "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records).encode(
        "utf-8"
    )


def _video_spec(key: str) -> tuple[int, int, float, str, int]:
    """(width, height, fps, style, layout position) of a planned video."""
    for pos, (source, index, _minutes, (w, h, fps), _tasks) in enumerate(_VIDEO_LAYOUT):
        if key == f"syn-{_slug(source)}-{index:02d}":
            return w, h, fps, SYNTHETIC_SOURCES[source][2], pos
    raise KeyError(key)


# ---------------------------------------------------------------------------
# Video writing
# ---------------------------------------------------------------------------

_CODEC_CACHE: str | None = None


def pick_codec() -> str:
    """``"libx264"`` if this PyAV build can encode it, else ``"mpeg4"``."""
    global _CODEC_CACHE
    if _CODEC_CACHE is None:
        import av

        try:
            av.codec.Codec("libx264", "w")
            _CODEC_CACHE = "libx264"
        except Exception:  # noqa: BLE001 - any failure means "not available"
            _CODEC_CACHE = "mpeg4"
    return _CODEC_CACHE


def write_video(
    path: str | Path,
    frames: Iterable[np.ndarray],
    fps: float,
    width: int,
    height: int,
    codec: str | None = None,
) -> int:
    """Encode RGB uint8 ``frames`` to an MP4 at a constant ``fps``; return the number written.

    yuv420p, GOP 50, no B-frames; libx264 at CRF 18 / preset ultrafast, or
    MPEG-4 part 2 at a high bit rate with a low quantiser ceiling.
    """
    import av

    codec = codec or pick_codec()
    rate = Fraction(fps).limit_denominator(1001)
    count = 0
    with av.open(str(path), mode="w", format="mp4") as container:
        if codec == "libx264":
            stream = container.add_stream(
                codec,
                rate=rate,
                options={"crf": "18", "preset": "veryfast", "g": "50", "bf": "0"},
            )
        else:
            stream = container.add_stream(
                codec, rate=rate, options={"g": "50", "qmin": "1", "qmax": "4"}
            )
            stream.bit_rate = 4_000_000
        stream.width = width
        stream.height = height
        stream.pix_fmt = "yuv420p"
        stream.codec_context.gop_size = 50
        stream.codec_context.max_b_frames = 0
        time_base = Fraction(1) / rate
        stream.codec_context.time_base = time_base
        for frame_array in frames:
            frame = av.VideoFrame.from_ndarray(frame_array, format="rgb24")
            frame.pts = count
            frame.time_base = time_base
            for packet in stream.encode(frame):
                container.mux(packet)
            count += 1
        for packet in stream.encode(None):
            container.mux(packet)
    return count


def count_frames(path: str | Path) -> int:
    """Number of frames obtained by decoding the whole video with PyAV."""
    import av

    n = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for _ in container.decode(stream):
            n += 1
    return n


def frame_codes(record: dict[str, Any]) -> np.ndarray:
    """Per native frame: ``tag * 4 + letter_index`` inside evidence windows, else -1.

    A window shows its question's answer, except in order items, whose
    ``synthetic_codes`` give one (tag, letter_index) per window (chronological).
    """
    codes = np.full(int(record["num_frames"]), -1, dtype=np.int16)
    for q in record["qa"]:
        per_window = q.get("synthetic_codes") or [[q["synthetic_tag"], LETTERS.index(q["answer"])]] * len(
            q["evidence"]["frame_windows"])
        for (s, e), (tag, letter_index) in zip(q["evidence"]["frame_windows"], per_window):
            code = int(tag) * 4 + int(letter_index)
            if (codes[s : e + 1] >= 0).any():
                raise ValueError(f"overlapping evidence windows in {record['key']}")
            codes[s : e + 1] = code
    return codes


def render_frames(record: dict[str, Any], seed: int = 0) -> Iterator[np.ndarray]:
    """The RGB frames of a planned video, in order."""
    width, height, fps, style, pos = _video_spec(record["key"])
    background = BackgroundGenerator(
        height, width, seed=int(seed) * 1000 + pos, style=style
    )
    code_frames: dict[int, np.ndarray] = {}
    for i, code in enumerate(frame_codes(record).tolist()):
        if code < 0:
            yield background(i / fps)
        else:
            frame = code_frames.get(code)
            if frame is None:
                frame = code_frames[code] = encode_code(
                    code >> 2, code & 3, height, width
                )
            yield frame


# ---------------------------------------------------------------------------
# Building / caching
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticBenchmark:
    root: Path  # the output folder
    data_path: Path  # root / "medhorizon_synthetic.jsonl"
    video_root: Path  # root / "videos"

    @classmethod
    def at(cls, root: str | Path) -> SyntheticBenchmark:
        root = Path(root)
        return cls(
            root=root, data_path=root / SYNTHETIC_JSONL_NAME, video_root=root / "videos"
        )

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def records(self) -> list[dict[str, Any]]:
        """The JSONL records."""
        with open(self.data_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def video_path(self, record: dict[str, Any]) -> Path:
        return self.video_root / record["video_path"]


def default_synthetic_dir() -> Path:
    """``$MEDHORIZON_SYNTHETIC_DIR``, else ``~/.cache/medhorizon_tasks/synthetic/v<GENERATOR_VERSION>``."""
    env = os.environ.get("MEDHORIZON_SYNTHETIC_DIR")
    if env:
        return Path(env).expanduser()
    return (
        Path.home()
        / ".cache"
        / "medhorizon_tasks"
        / "synthetic"
        / f"v{GENERATOR_VERSION}"
    )


def _read_manifest(root: Path) -> dict[str, Any] | None:
    try:
        with open(root / MANIFEST_NAME, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _is_valid(root: Path, seed: int) -> bool:
    manifest = _read_manifest(root)
    if manifest is None:
        return False
    if (
        manifest.get("generator_version") != GENERATOR_VERSION
        or manifest.get("seed") != seed
    ):
        return False
    bench = SyntheticBenchmark.at(root)
    if not bench.data_path.is_file():
        return False
    return all((bench.video_root / p).is_file() for p in manifest.get("videos", []))


def _build_into(tmp: Path, seed: int, progress: bool) -> dict[str, Any]:
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    records = plan_synthetic(seed)
    bench = SyntheticBenchmark.at(tmp)
    bench.video_root.mkdir(parents=True, exist_ok=True)
    codec = pick_codec()
    total_bytes = 0
    for record in tqdm(
        records, desc="MedHorizon synthetic videos", unit="video", disable=not progress
    ):
        width, height, fps, _style, _pos = _video_spec(record["key"])
        path = bench.video_path(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        written = write_video(
            path, render_frames(record, seed), fps, width, height, codec=codec
        )
        decoded = count_frames(path)
        if not written == decoded == record["num_frames"]:
            raise RuntimeError(
                f"{path}: planned {record['num_frames']} frames, wrote {written}, decoded {decoded}"
            )
        total_bytes += path.stat().st_size
    data = jsonl_bytes(records)
    bench.data_path.write_bytes(data)
    total_bytes += len(data)
    manifest = {
        "generator": GENERATOR,
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "num_videos": len(records),
        "num_questions": sum(len(r["qa"]) for r in records),
        "num_frames": sum(r["num_frames"] for r in records),
        "codec": codec,
        "total_bytes": total_bytes,
        "videos": [r["video_path"] for r in records],
        # everything written here, the only files a rebuild may remove
        "files": [SYNTHETIC_JSONL_NAME, MANIFEST_NAME, *(f"videos/{r['video_path']}" for r in records)],
        # informational only; not part of the cache identity
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(time.perf_counter() - t0, 3),
    }
    # the manifest is written last: its presence marks a complete build
    (tmp / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
    )
    return manifest


def _owned_files(root: Path) -> set[str] | None:
    """The files (relative POSIX paths) that the synthetic builder wrote in ``root``, from its manifest."""
    manifest = _read_manifest(root)
    if manifest is None or manifest.get("generator") != GENERATOR:
        return None
    files = manifest.get("files")
    if files is None:  # manifests from before the "files" list: the same files, named by "videos"
        videos = manifest.get("videos")
        if not isinstance(videos, list):
            return None
        files = [SYNTHETIC_JSONL_NAME, *(f"videos/{v}" for v in videos)]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return {*files, MANIFEST_NAME}


def _foreign_entries(root: Path, owned: Collection[str]) -> list[str]:
    """What ``root`` holds besides the files in ``owned`` and the folders leading to them (relative paths,
    folders with a trailing "/"); a symbolic link is always foreign, since the builders write none."""
    owned = set(owned)
    folders = {str(parent) for f in owned for parent in Path(f).parents if str(parent) != "."}
    found: list[str] = []

    def scan(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if rel in folders:
                        scan(entry.path, rel + "/")
                    else:
                        found.append(rel + "/")
                elif not (rel in owned and entry.is_file(follow_symlinks=False)):
                    found.append(rel)

    scan(str(root), "")
    return sorted(found)


def _remove_owned(root: Path, owned: Collection[str]) -> list[str]:
    """Delete the files in ``owned`` from ``root``, then the folders left empty; return what is left."""
    owned = set(owned)
    folders = {str(parent) for f in owned for parent in Path(f).parents if str(parent) != "."}

    def clean(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            entries = list(entries)
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if rel in folders:
                    clean(entry.path, rel + "/")
                    try:
                        os.rmdir(entry.path)
                    except OSError:
                        pass  # it still holds something that is not ours
            elif rel in owned and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)

    clean(str(root), "")
    try:
        os.rmdir(root)
    except OSError:
        return _foreign_entries(root, ())
    return []


def _top(rel: str) -> str:
    return rel.split("/", 1)[0]


def _listed(entries: list[str]) -> str:
    return ", ".join(entries[:10]) + (f" and {len(entries) - 10} more" if len(entries) > 10 else "")


def manifest_files(root: Path, generator: str, legacy: Callable[[dict], list[str] | None]) -> set[str] | None:
    """The files (relative POSIX paths) a builder wrote in ``root``, from its manifest: its ``files`` list when
    the manifest names ``generator``, else ``legacy(manifest)`` (a manifest from before the list), else None."""
    manifest = _read_manifest(root)
    if manifest is None:
        return None
    files = manifest.get("files") if manifest.get("generator") == generator else legacy(manifest)
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return {*files, MANIFEST_NAME}


def sample_is_valid(root: Path, seed: int, version: int, owned: Callable[[Path], set[str] | None]) -> bool:
    """A complete sample build of this ``version`` and ``seed``: its manifest, and every file it lists."""
    manifest = _read_manifest(root)
    files = owned(root)
    return (manifest is not None and files is not None and manifest.get("version") == version
            and manifest.get("seed") == seed and all((root / f).is_file() for f in files))


def _nested_build(folder: Path, name: str) -> bool:
    """Whether ``folder/name`` is another synthetic build of this package (the Sureon and SurgHiBench
    samples live inside the MedHorizon build folder by default, and may be built first) or its lock file:
    it is beside the build, not in its way."""
    path = folder / name
    if name.endswith(".lock") and not path.is_dir():
        return (folder / name[: -len(".lock")]).is_dir()
    if not path.is_dir() or path.is_symlink():
        return False
    manifest = _read_manifest(path)
    return manifest is not None and str(manifest.get("generator", "")).startswith("medhorizon_tasks.data.")


def _replaceable(folder: Path, shown: Path, owned: Callable[[Path], set[str] | None], what: str,
                 writes: Collection[str] = ()) -> set[str]:
    """The files of the build in ``folder`` that a rebuild may replace (none when it is absent or empty).

    DataError when ``folder`` is not a build (and not empty), or when something its builder did not write
    sits where the build lives: in one of its top-level entries, or at a top-level name that the build
    (``writes``, relative paths) is about to take. Entries beside the build are no obstacle.
    """
    if not os.path.lexists(folder):
        return set()
    if not folder.is_dir():
        raise DataError(f"{shown} exists and is not a folder; refusing to replace it")
    mine = owned(folder)
    if mine is None:
        with os.scandir(folder) as it:
            entries = sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in it
                             if not _nested_build(folder, e.name))
        if entries:
            raise DataError(f"{shown} exists and is not a {what} (it holds {_listed(entries)}); refusing to replace it")
        return set()
    tops = {_top(f) for f in (*mine, *writes)}
    in_the_way = [f for f in _foreign_entries(folder, mine) if _top(f.rstrip("/")) in tops]
    if in_the_way:
        raise DataError(
            f"{shown} holds a {what}, and inside its entries what its builder did not write: {_listed(in_the_way)}; "
            f"refusing to replace it, since a rebuild only removes or replaces the files its manifest lists. Move "
            f"those elsewhere (anything beside the build's own entries, {', '.join(sorted(tops))}, is kept)")
    return mine


def _swap(root: Path, new: Path, old: Path, old_files: Collection[str], new_files: Collection[str]) -> None:
    """Move the old build's top-level entries from ``root`` to ``old`` and the new build's from ``new`` to
    ``root``, leaving every other entry of ``root`` where it is."""
    # the manifest leaves first and arrives last: in between the folder is no valid build, so a reader
    # waits on the lock instead of mixing the two builds
    leaving = sorted({_top(f) for f in old_files}, key=lambda n: n != MANIFEST_NAME)
    arriving = sorted({_top(f) for f in new_files}, key=lambda n: n == MANIFEST_NAME)
    old.mkdir()
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        for name in leaving:
            if os.path.lexists(root / name):
                os.replace(root / name, old / name)
                moved_out.append(name)
        for name in arriving:
            os.replace(new / name, root / name)
            moved_in.append(name)
    except BaseException:
        for src, dst, names in ((root, new, moved_in), (old, root, moved_out)):
            for name in reversed(names):
                try:
                    os.replace(src / name, dst / name)
                except OSError:
                    pass  # the first error is the one to report
        raise


def build_folder(
    root: Path,
    *,
    write: Callable[[Path], object],
    valid: Callable[[Path], bool],
    owned: Callable[[Path], set[str] | None],
    what: str,
    force: bool = False,
) -> None:
    """Make ``root`` hold a valid build, reusing one unless ``force``; the one builder of all synthetic folders.

    ``write(tmp)`` creates a complete build in a new folder ``tmp``, with a
    ``manifest.json`` (written last) that lists every file it wrote;
    ``valid(folder)`` says whether a folder holds a complete build of the
    wanted kind; ``owned(folder)`` gives the files (relative POSIX paths) its
    manifest lists, or ``None`` when it has no manifest of this builder.

    Only those files are ever removed or replaced. Anything else in ``root``
    beside the build (a notes file, another sample's folder) stays where it
    is. Something the builder did not write inside the build's own entries
    (say ``videos/mine.mp4``), or a ``root`` that is neither a build nor empty,
    raises :class:`DataError` naming it, and nothing is touched. The check is
    made before building and again before the swap.

    The build is made in a temporary sibling folder and moved into place by
    renames; a file lock (``<root>.lock``) makes concurrent processes build
    once. ``root`` may be a symbolic link to a folder: the build goes there.
    """
    from filelock import FileLock

    if not force and valid(root):
        return
    real = Path(os.path.realpath(root))  # renames must stay on the folder's own file system
    real.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(real) + ".lock"):
        if not force and valid(root):  # another process built it meanwhile
            return
        _replaceable(real, root, owned, what)  # before building: a refusal should not cost a build
        tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp = real.parent / f".{real.name}.tmp-{tag}"
        old = real.parent / f".{real.name}.old-{tag}"
        old_files: set[str] = set()
        try:
            write(tmp)
            if not force and valid(root):
                return  # a concurrent builder (not honouring the lock) won: keep theirs
            if not os.path.lexists(real):
                try:
                    os.replace(tmp, real)
                except OSError:
                    if valid(root):  # lost a race to a builder that renamed in between: keep a valid winner
                        return
                    raise
                return
            new_files = owned(tmp)
            if new_files is None:
                raise RuntimeError(f"{tmp}: the build wrote no manifest listing its files")
            # again: files may have been added while we built
            old_files = _replaceable(real, root, owned, what, writes=new_files)
            _swap(real, tmp, old, old_files, new_files)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)  # holds only what write() made
            if os.path.lexists(old):
                left = _remove_owned(old, old_files)
                if left:
                    warnings.warn(f"{old} kept: it holds what the builder did not write ({_listed(left)})",
                                  stacklevel=3)


def build_synthetic(
    out_dir: str | Path | None = None,
    *,
    seed: int = 0,
    force: bool = False,
    progress: bool = True,
) -> SyntheticBenchmark:
    """Generate (or reuse) the synthetic benchmark in ``out_dir`` and describe it.

    ``out_dir`` defaults to :func:`default_synthetic_dir`. A build whose
    ``manifest.json`` records the same generator version and seed is reused
    as is unless ``force`` (files a user added to it are left alone). A
    rebuild removes or replaces only the files the previous build's manifest
    lists, keeps what lies beside them, and refuses with :class:`DataError`
    when something else sits inside ``videos/`` or where the build writes, or
    when ``out_dir`` is neither such a build nor empty (see
    :func:`build_folder`). Builds go to a temporary sibling folder and are
    moved into place by renames; a file lock (``<out_dir>.lock``) makes
    concurrent processes build it once.
    """
    seed = int(seed)
    root = (
        Path(out_dir).expanduser() if out_dir is not None else default_synthetic_dir()
    )
    root = root.absolute()
    build_folder(root, write=lambda tmp: _build_into(tmp, seed, progress), valid=lambda p: _is_valid(p, seed),
                 owned=_owned_files, what="synthetic MedHorizon build", force=force)
    return SyntheticBenchmark.at(root)
