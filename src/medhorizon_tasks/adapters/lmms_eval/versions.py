"""What differs between the lmms-eval versions this package supports, in one place.

* **The range**: :data:`SUPPORTED` -- every PyPI release from 0.6.0 through 0.7.x but 0.7.1, which cannot load
  any task (:data:`BROKEN`), and git main (whose version string is 0.7.2). ``pyproject.toml``'s ``lmms`` extra asks for the same range, so pip keeps an lmms-eval a
  user already has inside it (an editable checkout included).
* **Task fields newer than 0.6** (:data:`NEWER_TASK_FIELDS`): the task YAMLs carry them (``reasoning_tags:
  none``: lmms-eval's own stripping of reasoning blocks off, this package's scorers strip them); a ``TaskConfig``
  without the field would refuse every task (``unexpected keyword argument``), so the start-up drops the fields
  the installed ``TaskConfig`` does not have, for this package's tasks only (:func:`drop_unknown_task_fields`),
  which also anchors the tasks' placeholder ``data_files`` at the task folder (lmms-eval does so itself only
  from 0.7.3; before, a run from any other folder would not find it).
  Known by the field's presence, never by a version string.
* **What each of this package's models imports from lmms-eval** (:func:`model_problems`): read from the model
  module's ``from lmms_eval... import ...`` lines and looked up in the installed lmms-eval's files, so a bridge
  whose wrapper an older lmms-eval lacks is named at start, in one line, instead of failing mid-run.

Everything here reads lmms-eval's files and imports nothing of it, except :func:`drop_unknown_task_fields`, which
runs inside lmms-eval's own start-up.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["SUPPORTED", "DISTRIBUTION", "installed_version", "in_range", "range_problem", "lmms_eval_folder",
           "auto_task_folder", "missing_templates", "templates_problem", "NEWER_TASK_FIELDS",
           "task_config_fields", "missing_task_fields", "drop_unknown_task_fields", "model_problems",
           "model_problem", "generation_result_class", "feature_lines"]

DISTRIBUTION = "lmms-eval"
#: the lmms-eval versions this package is tested with (docs/stacks.md: what ran against each), less the releases
#: that cannot run any task at all (:data:`BROKEN`)
SUPPORTED = ">=0.6.0,<0.8,!=0.7.1"
BROKEN = {"0.7.1": "its wheel lacks its own task templates (tasks/*/_default_template_yaml): lmms-eval cannot build "
                   "its task index, for any task"}
_INCLUDE = re.compile(r"""^include[ \t]*:[ \t]*["']?([^"'#\s]+)""", re.M)
#: TaskConfig fields this package's task YAMLs set that older lmms-eval versions do not have, and what is lost
#: without them
NEWER_TASK_FIELDS = {
    "reasoning_tags": "lmms-eval strips no reasoning blocks itself here; this package's scorers strip them",
}
_OUR_PREFIXES = ("medhorizon", "sureon", "surghi")


def installed_version() -> str | None:
    """The installed lmms-eval's version string (None when it is absent)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None


def in_range(found: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(found) in SpecifierSet(SUPPORTED)
    except InvalidVersion:
        return False


def range_problem(found: str | None = None) -> str | None:
    """One line when the installed lmms-eval is outside :data:`SUPPORTED` (None when inside or absent)."""
    found = installed_version() if found is None else found
    if found is None or in_range(found):
        return None
    why = f": {BROKEN[found]}" if found in BROKEN else ""
    return (f"lmms-eval {found} is outside the supported range {SUPPORTED}{why} (docs/stacks.md); "
            f"`pip install \"lmms-eval{SUPPORTED}\"` installs a supported one")


def missing_templates(root: Path | None = None) -> list[str]:
    """The task templates lmms-eval's own task YAMLs ``include:`` that its install lacks (PyPI's 0.7.1 and 0.7.2
    wheels ship none of the extensionless ``_default_template_yaml`` files: no task loads, not even its own; a git
    checkout calling itself 0.7.2 has them). Read from the files; relative to ``root``."""
    root = lmms_eval_folder() if root is None else root
    tasks = root / "tasks" if root is not None else None
    if tasks is None or not tasks.is_dir():
        return []
    missing = set()
    for path in tasks.rglob("*.yaml"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for name in _INCLUDE.findall(text):
            if not (path.parent / name).exists():
                missing.add(str((path.parent / name).relative_to(root)))
    return sorted(missing)


def templates_problem(root: Path | None = None) -> str | None:
    """One line when the installed lmms-eval cannot load any task because its own templates are missing."""
    missing = missing_templates(root)
    if not missing:
        return None
    return (f"lmms-eval {installed_version()} lacks {len(missing)} of its own task templates (e.g. {missing[0]}): it "
            f"cannot build its task index, for any task (PyPI's 0.7.1 and 0.7.2 wheels); "
            f"`pip install \"lmms-eval==0.7.3\"` or a git checkout has them")


# ------------------------------------------------------------------ task fields

def lmms_eval_folder() -> Path | None:
    """The installed ``lmms_eval`` package's folder, found without importing it (None when it is absent)."""
    try:
        spec = importlib.util.find_spec("lmms_eval")  # a top-level name: finds the package, imports nothing
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def auto_task_folder() -> bool:
    """Whether lmms-eval's start-up adds this package's task folder to its search path (:mod:`.startup`): not when
    ``MEDHORIZON_NO_AUTO_TASKS`` is set, nor for an lmms-eval outside :data:`SUPPORTED`."""
    from ...core.settings import env_flag
    from .ours import NO_AUTO_TASKS_ENV

    if env_flag(NO_AUTO_TASKS_ENV):
        return False
    found = installed_version()
    return found is not None and in_range(found)


def task_config_fields(root: Path | None = None) -> frozenset[str] | None:
    """The fields of the installed lmms-eval's ``TaskConfig``, read from ``lmms_eval/api/task.py`` (None when it
    cannot be read)."""
    root = lmms_eval_folder() if root is None else root
    tree = _tree(root / "api" / "task.py") if root is not None else None
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TaskConfig":
            return frozenset(s.target.id for s in node.body
                             if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
    return None


def missing_task_fields(fields: frozenset[str] | None = None) -> list[str]:
    """The :data:`NEWER_TASK_FIELDS` the installed ``TaskConfig`` lacks."""
    fields = task_config_fields() if fields is None else fields
    return [] if fields is None else [name for name in NEWER_TASK_FIELDS if name not in fields]


def drop_unknown_task_fields() -> list[str]:
    """Inside lmms-eval: make its ``TaskConfig``, for this package's tasks, drop the :data:`NEWER_TASK_FIELDS` it
    does not have, and read the placeholder ``data_files`` relative to the task folder (lmms-eval resolves them
    against the YAML's folder only from 0.7.3; before, against the working directory). Idempotent. Returns the
    fields dropped."""
    import dataclasses

    from lmms_eval.api.task import TaskConfig

    from .ours import task_path

    have = {f.name for f in dataclasses.fields(TaskConfig)}
    missing = [name for name in NEWER_TASK_FIELDS if name not in have]
    original = TaskConfig.__init__
    if getattr(original, "_medhorizon_fields", None) is not None:
        return missing
    folder = task_path()

    def __init__(self, *args, **kwargs):
        if str(kwargs.get("task") or "").startswith(_OUR_PREFIXES):
            for name in missing:
                kwargs.pop(name, None)
            kwargs = _anchored_data_files(kwargs, folder)
        original(self, *args, **kwargs)

    __init__._medhorizon_fields = tuple(missing)
    __init__.__wrapped__ = original
    TaskConfig.__init__ = __init__
    return missing


def _anchored_data_files(config: dict, folder: Path) -> dict:
    dataset_kwargs = config.get("dataset_kwargs")
    files = dataset_kwargs.get("data_files") if isinstance(dataset_kwargs, dict) else None
    if not isinstance(files, dict):
        return config
    anchored = {k: str(folder / v) if isinstance(v, str) and not Path(v).is_absolute() else v for k, v in files.items()}
    return {**config, "dataset_kwargs": {**dataset_kwargs, "data_files": anchored}}


# ------------------------------------------------------------------ what our models import

@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _module_file(root: Path, dotted: str) -> Path | None:
    """``lmms_eval.a.b`` -> its file under ``root`` (the lmms_eval folder), a module or a package."""
    parts = dotted.split(".")[1:]
    base = root.joinpath(*parts) if parts else root
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _defines(path: Path, name: str) -> bool:
    """Whether the module at ``path`` binds ``name`` at its top level (or a submodule of that name exists)."""
    if path.name == "__init__.py" and ((path.parent / f"{name}.py").is_file()
                                       or (path.parent / name / "__init__.py").is_file()):
        return True
    tree = _tree(path)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name
                                                                  for a in node.names):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _our_module_file(class_path: str) -> Path | None:
    module = class_path.rsplit(".", 1)[0]
    try:
        spec = importlib.util.find_spec(module.rsplit(".", 1)[0])  # our package: cheap, imports no lmms-eval
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(loc) / f"{module.rsplit('.', 1)[1]}.py"
        if path.is_file():
            return path
    return None


def _missing_imports(path: Path, root: Path, seen: set[Path]) -> list[str]:
    """``lmms_eval.x.Name`` that the module at ``path`` (and the modules of this package it imports from its
    own folder) asks for and the installed lmms-eval lacks."""
    if path in seen:
        return []
    seen.add(path)
    tree = _tree(path)
    out: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.module and node.module.split(".")[0] == "lmms_eval":
            target = _module_file(root, node.module)
            if target is None:
                out.append(node.module)
                continue
            out += [f"{node.module}.{a.name}" for a in node.names if not _defines(target, a.name)]
        elif node.level == 1 and node.module:  # a sibling module of ours (a bridge's base, frames, ...)
            sibling = path.parent / f"{node.module.replace('.', '/')}.py"
            if sibling.is_file():
                out += _missing_imports(sibling, root, seen)
    return out


def _our_models() -> dict[str, str]:
    from .bridges.manifest import BRIDGES
    from .ours import PROBES

    return {**PROBES, **{name: path for name, (path, _) in BRIDGES.items()}}


def model_problems(root: Path | None = None) -> dict[str, list[str]]:
    """``{model: the lmms-eval names it imports that the installed lmms-eval lacks}`` for this package's models
    (all of them missing everything when lmms-eval is absent)."""
    root = lmms_eval_folder() if root is None else root
    out = {}
    for name, class_path in _our_models().items():
        path = _our_module_file(class_path)
        if root is None:
            out[name] = ["lmms_eval"]
        elif path is not None:
            out[name] = sorted(set(_missing_imports(path, root, set())))
    return out


def model_problem(model: str) -> str | None:
    """One line when ``model`` is one of this package's and cannot work on the installed lmms-eval."""
    missing = model_problems().get(model)
    if not missing:
        return None
    return (f"--model {model} needs {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}, which "
            f"lmms-eval {installed_version()} does not have; the newest lmms-eval 0.7.x has it")


def generation_result_class() -> type | None:
    """lmms-eval's ``GenerationResult`` (0.7: a generation's text with its token counts), None where a generation
    is a plain text (0.6)."""
    import lmms_eval.api.instance

    return getattr(lmms_eval.api.instance, "GenerationResult", None)


def feature_lines() -> list[str]:
    """One line per feature of this package the installed lmms-eval cannot give (said once at start)."""
    lines = [f"lmms-eval {installed_version()} has no TaskConfig field {name}: {why}"
             for name, why in NEWER_TASK_FIELDS.items() if name in missing_task_fields()]
    return lines
