"""Shipped SurgHiBench hierarchies: MultiBypass140 (StrasbyPass70 / BernBypass70), GraSP, MIPO.

Sources and caveats (read them before quoting a tree-likeness):

* **MultiBypass140** (``CAMMA-public/MultiBypass140``): phases from ``tables/phase.csv``
  (0-10; ``11 other_intervention`` is excluded as in the paper, supplement A.2: "the dataset
  defines 12 phases, but following SurgLaVi and existing zero-shot studies, we exclude the
  'other' class"; ``out_of_body`` / ``severe_index`` are overlays, not phases); 46 steps from
  ``tables/step.csv`` (``null_step`` included: the paper counts 46 steps).  The step -> phase
  membership is the official figure ``static/hierarchy.jpg`` (checked against the JSON
  annotations).  StrasbyPass70 and BernBypass70 share this one vocabulary, so both names map
  to the same :class:`Hierarchy`.  Its tree-likeness is 41/46 = 89%; the paper's 74%
  (Stras) and 54% (Bern) come from each dataset's own annotations - derive those with
  :meth:`Hierarchy.from_annotations` when the frame labels are at hand.
* **GraSP**: 11 phases / 21 steps (PSI-AVA category lists).  No official step -> phase table
  exists; the membership here is the step/phase co-occurrence counted in the PSI-AVA fold-1
  key frames (older annotations).  "Suction" and "Cut" are placed in every phase but Idle
  (the paper: each occurs in "10 of 11 phases"; which phase is missing is not stated).
  This gives 12/21 = 57% tree-likeness, not the paper's 33% (revised December-2024 labels):
  an approximation - prefer :meth:`Hierarchy.from_annotations` on the real labels.
* **MIPO** (Graeff et al. 2025): the 5 phases and 8 steps are those of the paper's
  supplement Tables 6-7 ("the released annotation files contain 5 and 8 distinct labels").
  The paper gives MIPO's tree-likeness as 100% but no step -> phase table; the membership
  below is *inferred* from the names and the Table 6 prompts (the Fixation phase prompt
  "I place the volar locking plate and secure the distal radius fracture with K-wires,
  distal locking screws and proximal screws" covers plate introduction/modification and
  distal/proximal fixation).

Semantic step groups are the paper's supplement Table 5.  Aliases cover the CSV ``sN_``
names, the figure's alternative names and the names the paper itself prints.
"""

from __future__ import annotations

from .hierarchy import Hierarchy

# --------------------------------------------------------------------------- MultiBypass140
BYPASS_PHASES = (
    "preparation", "gastric_pouch_creation", "omentum_division", "gastrojejunal_anastomosis",
    "anastomosis_test", "jejunal_separation", "closure_petersen_space", "jejunojejunal_anastomosis",
    "closure_mesenteric_defect", "cleaning_coagulation", "disassembling",
)  # phase.csv ids 0-10; 11 other_intervention excluded

BYPASS_STEPS = (
    "null_step", "cavity_exploration", "trocar_placement", "retractor_placement", "crura_dissection",
    "his_angle_dissection", "horizontal_stapling", "retrogastric_dissection", "vertical_stapling",
    "gastric_remnant_reinforcement", "gastric_pouch_reinforcement", "gastric_opening", "omental_lifting",
    "omental_section", "adhesiolysis", "treitz_angle_identification", "biliary_limb_measurement",
    "jejunum_opening", "gastrojejunal_stapling", "gastrojejunal_defect_closing", "mesenteric_opening",
    "jejunal_section", "gastric_tube_placement", "jejunal_clamping", "ink_injection", "visual_assessment",
    "gastrojejunal_anastomosis_reinforcement", "petersen_space_exposure", "petersen_space_closing",
    "biliary_limb_opening", "alimentary_limb_measurement", "alimentary_limb_opening",
    "jejunojejunal_stapling", "jejunojejunal_defect_closing", "jejunojejunal_anastomosis_reinforcement",
    "staple_line_reinforcement", "mesenteric_defect_exposure", "mesenteric_defect_closing",
    "anastomosis_fixation", "coagulation", "irrigation_aspiration", "parietal_closure", "trocar_removal",
    "calibration", "drainage_insertion", "specimen_retrieval",
)  # step.csv ids 0-45

_R = lambda a, b: list(range(a, b + 1))  # noqa: E731
BYPASS_PHASE_STEP_IDS: dict[int, list[int]] = {  # static/hierarchy.jpg, 0-based phase ids
    0: [0, 1, 2, 3, 14, 22, 39, 40],
    1: [0, *_R(4, 11), 22, 39, 40],
    2: [0, 12, 13, 39],
    3: [0, *_R(15, 19), 26, 39, 40],
    4: [0, 3, *_R(22, 25), 39, 40],
    5: [0, 3, 20, 21, 39, 40],
    6: [0, 27, 28],
    7: [0, *_R(29, 35), 39, 40],
    8: [0, *_R(36, 38)],
    9: [0, 39, 40, 43],
    10: [0, 41, 42, 44, 45],
}

_BYPASS_STEP_ALIASES = {
    **{f"s{i}_{name}": name for i, name in enumerate(BYPASS_STEPS)},  # step.csv spelling
    # figure (static/hierarchy.jpg) names
    "fat pad dissection": "crura_dissection",
    "lesser curve dissection": "his_angle_dissection",
    "lesser curvature dissection": "his_angle_dissection",
    "omentum exposure": "omental_lifting",
    "exposure of the omentum": "omental_lifting",
    "omental transection": "omental_section",
    "dye injection": "ink_injection",
    "hemostasis": "coagulation",
    "suture of small bowel lesion": "calibration",
    # names printed in the paper (Fig. 1, 4, 5, Table 5)
    "nullstep": "null_step",
    "null": "null_step",
    "jejunal transection": "jejunal_section",
    "gastrojejunal defect closure": "gastrojejunal_defect_closing",
    "jejunojejunal defect closure": "jejunojejunal_defect_closing",
    "petersen space closure": "petersen_space_closing",
    "petersenspaceexposure": "petersen_space_exposure",
    "petersenspaceclosure": "petersen_space_closing",
    "mesenteric defect closure": "mesenteric_defect_closing",
    "gastrojejunal anast. reinforcement": "gastrojejunal_anastomosis_reinforcement",
    "jejunojejunal anast. reinforcement": "jejunojejunal_anastomosis_reinforcement",
    "retrogastric dissection": "retrogastric_dissection",
}
_BYPASS_PHASE_ALIASES = {
    **{f"p{i}_{name}": name for i, name in enumerate(BYPASS_PHASES)},
    "petersen space closure": "closure_petersen_space",
    "mesenteric defect closure": "closure_mesenteric_defect",
    "cleaning and coagulation": "cleaning_coagulation",
}
BYPASS_SEMANTIC_GROUPS = {  # supplement Table 5, StrasbyPass70 / BernBypass70
    "defect closure": ["gastrojejunal_defect_closing", "jejunojejunal_defect_closing"],
    "reinforcement": ["gastrojejunal_anastomosis_reinforcement", "jejunojejunal_anastomosis_reinforcement"],
    "stapling": ["horizontal_stapling", "vertical_stapling", "gastrojejunal_stapling", "jejunojejunal_stapling"],
    "limb measurement": ["biliary_limb_measurement", "alimentary_limb_measurement"],
    "limb opening": ["jejunum_opening", "biliary_limb_opening", "alimentary_limb_opening"],
    "dissection": ["crura_dissection", "his_angle_dissection", "retrogastric_dissection"],
    "space closure/exposure": ["petersen_space_exposure", "petersen_space_closing",
                               "mesenteric_defect_exposure", "mesenteric_defect_closing"],
}

MULTIBYPASS140 = Hierarchy(
    phases=BYPASS_PHASES,
    steps=BYPASS_STEPS,
    membership={s: frozenset(BYPASS_PHASES[p] for p, ids in BYPASS_PHASE_STEP_IDS.items() if i in ids)
                for i, s in enumerate(BYPASS_STEPS)},
    semantic_groups={g: frozenset(ss) for g, ss in BYPASS_SEMANTIC_GROUPS.items()},
    phase_aliases=_BYPASS_PHASE_ALIASES,
    step_aliases=_BYPASS_STEP_ALIASES,
    name="MultiBypass140",
)

# --------------------------------------------------------------------------- GraSP
GRASP_PHASES = (
    "Idle", "LPIL", "RPIL", "Retzius_Space", "Dorsal_Venous_Complex", "Id_Bladder_Neck",
    "Seminal_Vesicles", "Denonvilliers_Fascia", "Pedicle_Control", "Severing_Prostate_Urethra",
    "Bladder_Neck_Rec",
)
GRASP_STEPS = (
    "Idle", "Id_Illiac_Vein_Artery", "Dissection_Illiac_Lymph_Nodes", "Dissection_Obturator_Lymph_Nodes",
    "Pack_Lymph_Nodes", "Prevessical_Dissection", "Ligation_Dorsal_Venous_Complex", "Prostate_Dissection",
    "Seminal_Vessicle_Dissection", "Denon_Dissection", "Cut_Prostate", "Hold_Prostate", "Pack_Prostate",
    "Pass_Suture_Urethra", "Pass_Suture_Neck", "Pull_Suture", "Tie_Suture", "Suction", "Cut",
    "Cut_Bladder", "Clip_Pedicles",
)
GRASP_STEP_PHASE_IDS: dict[int, list[int]] = {  # PSI-AVA fold-1 co-occurrence (approximate)
    0: [0], 1: [1, 2], 2: [1, 2], 3: [1, 2], 4: [1, 2], 5: [3], 6: [4], 7: [3], 8: [6],
    9: [7, 9], 10: [9], 11: [9], 12: [9], 13: [10], 14: [10], 15: [10], 16: [4, 10, 3],
    17: list(range(1, 11)), 18: list(range(1, 11)), 19: [5], 20: [8, 6],
}
_GRASP_PHASE_ALIASES = {
    "left pelvic isolated lymphadenectomy": "LPIL",
    "right pelvic isolated lymphadenectomy": "RPIL",
    "bladder neck identification and transection": "Id_Bladder_Neck",
    "bladder neck identification": "Id_Bladder_Neck",
    "severing of the prostate from the urethra": "Severing_Prostate_Urethra",
    "bladder neck reconstruction": "Bladder_Neck_Rec",
    "retzius space": "Retzius_Space",
    "seminal vesicle": "Seminal_Vesicles",
}
_GRASP_STEP_ALIASES = {
    "identification and dissection of the iliac vein and artery": "Id_Illiac_Vein_Artery",
    "id iliac vein artery": "Id_Illiac_Vein_Artery",
    "cutting and dissection of the external iliac vein's lymph node": "Dissection_Illiac_Lymph_Nodes",
    "dissection iliac lymph nodes": "Dissection_Illiac_Lymph_Nodes",
    "prevesical dissection": "Prevessical_Dissection",
    "seminal vesicle dissection": "Seminal_Vessicle_Dissection",
    "cut between the prostate and bladder neck": "Cut_Bladder",
    "cut the tissue between the prostate and the urethra": "Cut_Prostate",
    "pass suture to the bladder neck": "Pass_Suture_Neck",
    "cut suture or tissue": "Cut",
}
GRASP_SEMANTIC_GROUPS = {  # supplement Table 5, GraSP
    "lymph node dissection": ["Dissection_Illiac_Lymph_Nodes", "Dissection_Obturator_Lymph_Nodes"],
    "anatomical dissection": ["Prevessical_Dissection", "Prostate_Dissection",
                              "Seminal_Vessicle_Dissection", "Denon_Dissection"],
    "packing": ["Pack_Lymph_Nodes", "Pack_Prostate"],
    "cutting": ["Cut_Prostate", "Cut", "Cut_Bladder"],
    "pass suture": ["Pass_Suture_Urethra", "Pass_Suture_Neck"],
}
GRASP = Hierarchy(
    phases=GRASP_PHASES,
    steps=GRASP_STEPS,
    membership={GRASP_STEPS[s]: frozenset(GRASP_PHASES[p] for p in ps) for s, ps in GRASP_STEP_PHASE_IDS.items()},
    semantic_groups={g: frozenset(ss) for g, ss in GRASP_SEMANTIC_GROUPS.items()},
    phase_aliases=_GRASP_PHASE_ALIASES,
    step_aliases=_GRASP_STEP_ALIASES,
    name="GraSP",
)

# --------------------------------------------------------------------------- MIPO
MIPO_PHASES = ("Approach", "Installation", "Fixation", "Verification", "Closure")  # Table 6
MIPO_MEMBERSHIP = {  # Table 7 steps; membership inferred (see module docstring)
    "Approach": ["Approach"],
    "Installation": ["Installation"],
    "Introduction of the Plate": ["Fixation"],
    "Modification of Plate Positioning": ["Fixation"],
    "Distal Fixation": ["Fixation"],
    "Proximal Fixation": ["Fixation"],
    "Verification": ["Verification"],
    "Closure": ["Closure"],
}
MIPO_SEMANTIC_GROUPS = {  # supplement Table 5, MIPO
    "fixation": ["Distal Fixation", "Proximal Fixation"],
    "plate handling": ["Introduction of the Plate", "Modification of Plate Positioning"],
}
MIPO = Hierarchy(
    phases=MIPO_PHASES,
    steps=tuple(MIPO_MEMBERSHIP),
    membership={s: frozenset(ps) for s, ps in MIPO_MEMBERSHIP.items()},
    semantic_groups={g: frozenset(ss) for g, ss in MIPO_SEMANTIC_GROUPS.items()},
    step_aliases={"modification of plate position": "Modification of Plate Positioning",
                  "introduction of plate": "Introduction of the Plate"},
    name="MIPO",
)

KNOWN_HIERARCHIES: dict[str, Hierarchy] = {
    "multibypass140": MULTIBYPASS140,
    "strasbypass70": MULTIBYPASS140,
    "bernbypass70": MULTIBYPASS140,
    "grasp": GRASP,
    "mipo": MIPO,
}


def get_hierarchy(name: str) -> Hierarchy:
    """Look up a shipped hierarchy by dataset name (case/spacing-insensitive)."""
    key = "".join(name.casefold().split()).replace("_", "").replace("-", "")
    if key not in KNOWN_HIERARCHIES:
        raise KeyError(f"unknown SurgHiBench dataset {name!r}; known: {', '.join(sorted(KNOWN_HIERARCHIES))}")
    return KNOWN_HIERARCHIES[key]
