"""The phase -> step hierarchy of one surgical dataset, and label canonicalisation.

SurgHiBench (Manzano Rodriguez et al., arXiv 2609.27139, Sec. 3.2): "In some datasets, each
step belongs to exactly one phase, forming a clean tree (MIPO, 100%). In others, steps recur
across multiple phases, forming a directed acyclic graph (DAG) where the parent-child
relationship is ambiguous (GraSP, 33%)."  A :class:`Hierarchy` therefore maps each step to a
*set* of parent phases.

Every label that enters this package goes through :func:`canonical` first: lower case,
underscores and hyphens read as spaces, runs of white space collapsed, then the dataset's
alias map applied.  So ``"Gastric_Pouch-Creation "`` and ``"gastric pouch creation"`` are the
same label.  Phase and step aliases are kept apart because some names are used at both
levels (e.g. the figure's "Petersen space closure" is a phase *and* a step).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ...core.errors import DataError

_SPACES = re.compile(r"\s+")


def normalize(label: Any) -> str:
    """Case-, spacing-, underscore- and hyphen-insensitive key of a label (no aliases)."""
    text = unicodedata.normalize("NFKC", str(label)).casefold()
    text = text.replace("_", " ").replace("-", " ").replace("\u2019", "'")
    return _SPACES.sub(" ", text).strip()


def canonical(label: Any, aliases: Mapping[str, str] | None = None) -> str:
    """The canonical form of ``label``: :func:`normalize`, then the alias map (keys and values
    are themselves normalised, so an alias map may be written in any spelling)."""
    key = normalize(label)
    if aliases:
        hit = aliases.get(key)
        if hit is None:  # tolerate alias maps whose keys were not normalised
            for k, v in aliases.items():
                if normalize(k) == key:
                    hit = v
                    break
        if hit is not None:
            return normalize(hit)
    return key


def _norm_aliases(aliases: Mapping[str, str] | None) -> dict[str, str]:
    return {normalize(k): normalize(v) for k, v in (aliases or {}).items()}


@dataclass(frozen=True)
class Hierarchy:
    """Phases, steps, step -> parent phases (a DAG), and the semantic step groups.

    All names are stored in canonical form.  ``semantic_groups`` must be disjoint; a step in no
    group forms a group of its own (so its only semantic match is itself).
    """

    phases: tuple[str, ...]
    steps: tuple[str, ...]
    membership: dict[str, frozenset[str]]
    semantic_groups: dict[str, frozenset[str]] = field(default_factory=dict)
    phase_aliases: dict[str, str] = field(default_factory=dict)
    step_aliases: dict[str, str] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        problems: list[str] = []
        norm = {
            "phases": tuple(normalize(p) for p in self.phases),
            "steps": tuple(normalize(s) for s in self.steps),
        }
        for fld, names in norm.items():
            seen: set[str] = set()
            for n in names:
                if not n:
                    problems.append(f"{fld}: empty name")
                elif n in seen:
                    problems.append(f"{fld}: {n!r} appears twice")
                seen.add(n)
        phases, steps = set(norm["phases"]), set(norm["steps"])
        membership = {normalize(s): frozenset(normalize(p) for p in ps) for s, ps in self.membership.items()}
        for s in sorted(steps - membership.keys()):
            problems.append(f"membership: step {s!r} has no entry")
        for s, ps in membership.items():
            if s not in steps:
                problems.append(f"membership: {s!r} is not a step")
            if not ps:
                problems.append(f"membership[{s!r}]: belongs to no phase")
            for p in sorted(ps - phases):
                problems.append(f"membership[{s!r}]: {p!r} is not a phase")
        groups = {normalize(g): frozenset(normalize(s) for s in ss) for g, ss in self.semantic_groups.items()}
        owner: dict[str, str] = {}
        for g, ss in groups.items():
            for s in sorted(ss):
                if s not in steps:
                    problems.append(f"semantic_groups[{g!r}]: {s!r} is not a step")
                elif s in owner:
                    problems.append(f"semantic_groups[{g!r}]: {s!r} is already in group {owner[s]!r}")
                else:
                    owner[s] = g
        if problems:
            raise DataError(problems, source=f"hierarchy {self.name}" if self.name else "hierarchy")
        object.__setattr__(self, "phases", norm["phases"])
        object.__setattr__(self, "steps", norm["steps"])
        object.__setattr__(self, "membership", membership)
        object.__setattr__(self, "semantic_groups", groups)
        object.__setattr__(self, "phase_aliases", _norm_aliases(self.phase_aliases))
        object.__setattr__(self, "step_aliases", _norm_aliases(self.step_aliases))
        object.__setattr__(self, "_group_of", owner)
        object.__setattr__(self, "_children", {p: frozenset(s for s, ps in membership.items() if p in ps)
                                                for p in norm["phases"]})

    # --- labels -------------------------------------------------------------------------
    def canonical_phase(self, label: Any) -> str:
        """Canonical phase name (may be outside the vocabulary: check :meth:`is_phase`)."""
        return canonical(label, self.phase_aliases)

    def canonical_step(self, label: Any) -> str:
        """Canonical step name (may be outside the vocabulary: check :meth:`is_step`)."""
        return canonical(label, self.step_aliases)

    def is_phase(self, label: Any) -> bool:
        return self.canonical_phase(label) in self._children  # type: ignore[attr-defined]

    def is_step(self, label: Any) -> bool:
        return self.canonical_step(label) in self.membership

    # --- structure ----------------------------------------------------------------------
    def parent_phases(self, step: Any) -> frozenset[str]:
        """The phases ``step`` belongs to (KeyError for an unknown step)."""
        s = self.canonical_step(step)
        if s not in self.membership:
            raise KeyError(f"unknown step {step!r}" + (f" in {self.name}" if self.name else ""))
        return self.membership[s]

    def child_steps(self, phase: Any) -> frozenset[str]:
        """The steps that belong to ``phase`` (KeyError for an unknown phase)."""
        p = self.canonical_phase(phase)
        children = self._children  # type: ignore[attr-defined]
        if p not in children:
            raise KeyError(f"unknown phase {phase!r}" + (f" in {self.name}" if self.name else ""))
        return children[p]

    def semantic_group(self, step: Any) -> str:
        """The semantic group of ``step``; a step in no group is its own group (its name)."""
        s = self.canonical_step(step)
        if s not in self.membership:
            raise KeyError(f"unknown step {step!r}" + (f" in {self.name}" if self.name else ""))
        return self._group_of.get(s, s)  # type: ignore[attr-defined]

    def tree_likeness(self) -> float:
        """Share of steps that belong to exactly one phase.

        Paper, Table 1: "tree-likeness, defined as the percentage of steps that belong to
        exactly one phase (100% = pure tree, lower = more DAG-like)."  Returned as 0..1.
        """
        if not self.steps:  # phases only
            return float("nan")
        return sum(len(self.membership[s]) == 1 for s in self.steps) / len(self.steps)

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def from_annotations(cls, rows: Iterable[tuple[Any, Any, Any, Any]], *,
                         semantic_groups: Mapping[str, Iterable[str]] | None = None,
                         phase_aliases: Mapping[str, str] | None = None,
                         step_aliases: Mapping[str, str] | None = None,
                         name: str = "") -> "Hierarchy":
        """Derive the hierarchy from frame annotations ``(video, frame, phase, step)``.

        A step belongs to every phase it co-occurs with in at least one frame (this is how
        the paper's per-dataset tree-likeness, e.g. StrasbyPass70 74% vs BernBypass70 54%,
        differs between two datasets that share one vocabulary).  Phases and steps keep
        their order of first appearance.  Rows with an empty or missing phase/step are errors,
        except when no row has a step: the hierarchy then has phases only.
        """
        pa, sa = _norm_aliases(phase_aliases), _norm_aliases(step_aliases)
        phases: dict[str, None] = {}
        membership: dict[str, set[str]] = {}
        problems: list[str] = []
        rows = list(rows)
        phase_only = bool(rows) and all(isinstance(r, (tuple, list)) and len(r) == 4
                                        and (r[3] is None or not normalize(r[3])) for r in rows)
        for i, row in enumerate(rows):
            try:
                video, frame, phase, step = row
            except (TypeError, ValueError):
                problems.append(f"row {i}: expected (video, frame, phase, step), got {row!r}")
                continue
            where = f"row {i} (video {video!r}, frame {frame!r})"
            if phase is None or not normalize(phase):
                problems.append(f"{where}: phase is empty")
                continue
            if phase_only:
                phases.setdefault(canonical(phase, pa), None)
                continue
            if step is None or not normalize(step):
                problems.append(f"{where}: step is empty")
                continue
            p, s = canonical(phase, pa), canonical(step, sa)
            phases.setdefault(p, None)
            membership.setdefault(s, set()).add(p)
        if not problems and not membership and not phases:
            problems.append("no annotation rows")
        if problems:
            raise DataError(problems, source=f"annotations {name}" if name else "annotations")
        return cls(phases=tuple(phases), steps=tuple(membership),
                   membership={s: frozenset(ps) for s, ps in membership.items()},
                   semantic_groups={g: frozenset(canonical(x, sa) for x in ss)
                                    for g, ss in (semantic_groups or {}).items()},
                   phase_aliases=pa, step_aliases=sa, name=name)

    @classmethod
    def from_json(cls, obj: Any, *, name: str = "", source: str | None = None) -> "Hierarchy":
        """Build from ``{"phases": {phase: [steps]}, "semantic_groups": {group: [steps]},
        "phase_aliases": {alias: phase}, "step_aliases": {alias: step}}``.

        Only ``phases`` is required.  A step listed under several phases belongs to all of
        them.  Every problem is reported at once, each naming its field, in a
        :class:`~medhorizon_tasks.core.errors.DataError`.
        """
        src = source or (f"hierarchy {name}" if name else "hierarchy JSON")
        problems: list[str] = []
        if not isinstance(obj, Mapping):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", source=src)
        unknown = sorted(set(obj) - {"phases", "semantic_groups", "phase_aliases", "step_aliases", "name"})
        for k in unknown:
            problems.append(f"{k}: unknown field")
        pa_raw, sa_raw = obj.get("phase_aliases", {}), obj.get("step_aliases", {})
        for fld, val in (("phase_aliases", pa_raw), ("step_aliases", sa_raw)):
            if not isinstance(val, Mapping) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                       for k, v in val.items()):
                problems.append(f"{fld}: expected an object of alias -> name strings")
        pa = _norm_aliases(pa_raw) if not any(p.startswith("phase_aliases") for p in problems) else {}
        sa = _norm_aliases(sa_raw) if not any(p.startswith("step_aliases") for p in problems) else {}

        phases_obj = obj.get("phases")
        phases: list[str] = []
        membership: dict[str, set[str]] = {}
        if phases_obj is None:
            problems.append("phases: missing (expected an object phase -> list of steps)")
        elif not isinstance(phases_obj, Mapping):
            problems.append(f"phases: expected an object phase -> list of steps, got {type(phases_obj).__name__}")
        elif not phases_obj:
            problems.append("phases: empty")
        else:
            for phase, steps in phases_obj.items():
                p = canonical(phase, pa)
                if not p:
                    problems.append(f"phases[{phase!r}]: empty phase name")
                    continue
                if p in phases:
                    problems.append(f"phases[{phase!r}]: phase {p!r} is listed twice")
                    continue
                phases.append(p)
                if not isinstance(steps, list):
                    problems.append(f"phases[{phase!r}]: expected a list of step names, got {type(steps).__name__}")
                    continue
                for j, step in enumerate(steps):
                    if not isinstance(step, str) or not normalize(step):
                        problems.append(f"phases[{phase!r}][{j}]: expected a non-empty step name, got {step!r}")
                        continue
                    membership.setdefault(canonical(step, sa), set()).add(p)
            # no phase listing any step: a hierarchy of phases only (a dataset annotated with phases only)

        groups_obj = obj.get("semantic_groups", {})
        groups: dict[str, frozenset[str]] = {}
        if not isinstance(groups_obj, Mapping):
            problems.append(f"semantic_groups: expected an object group -> list of steps, got {type(groups_obj).__name__}")
        else:
            for g, steps in groups_obj.items():
                if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
                    problems.append(f"semantic_groups[{g!r}]: expected a list of step names")
                    continue
                members = frozenset(canonical(s, sa) for s in steps)
                for s in steps:
                    if membership and canonical(s, sa) not in membership:
                        problems.append(f"semantic_groups[{g!r}]: {s!r} is not a step of any phase")
                groups[g] = members
        if problems:
            raise DataError(problems, source=src)
        return cls(phases=tuple(phases), steps=tuple(membership),
                   membership={s: frozenset(ps) for s, ps in membership.items()},
                   semantic_groups=groups, phase_aliases=pa, step_aliases=sa,
                   name=name or str(obj.get("name", "")))

    def to_json(self) -> dict:
        """Inverse of :meth:`from_json` (canonical names)."""
        return {"phases": {p: [s for s in self.steps if p in self.membership[s]] for p in self.phases},
                "semantic_groups": {g: sorted(ss) for g, ss in self.semantic_groups.items()},
                "phase_aliases": dict(self.phase_aliases), "step_aliases": dict(self.step_aliases)}
