"""The words of the synthetic MedHorizon questions: per-source label vocabularies, question
templates, and the four options a question offers, drawn from them (see :mod:`.questions`)."""

from __future__ import annotations

import numpy as np

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
