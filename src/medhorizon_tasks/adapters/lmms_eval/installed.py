"""What lmms-eval would find, read without importing lmms-eval: its task names and its model names.

``medhorizon-tasks run`` / ``diagnose`` / ``sweep`` check every task and model
name before lmms-eval is started: importing ``lmms_eval.models`` or
``lmms_eval.tasks`` takes 6-10 s and a typo would cost a whole start-up (and
end in lmms-eval's traceback). So the names are read from lmms-eval's files:

* **tasks**: the task index lmms-eval's ``TaskManager`` builds
  (``_get_task_and_group``), rebuilt from the same files: every ``*.yaml``
  under lmms-eval's ``tasks/`` folder, this package's task folder (when
  lmms-eval would add it: :mod:`.startup`), each ``--include_path`` and each
  ``LMMS_EVAL_PLUGINS`` package's ``tasks/``. Only four top-level keys matter
  (``task``, ``group``, ``tag``, ``include``), so each file is read line by
  line, its ``include`` chain followed as lmms-eval does: no YAML parser, no
  ``!function`` resolved (about 0.05 s for lmms-eval's ~1,900 files). A test
  compares the result with ``TaskManager.all_tasks``.
* **models**: lmms-eval's built-in tables (``AVAILABLE_SIMPLE_MODELS``,
  ``AVAILABLE_CHAT_TEMPLATE_MODELS``, ``MODEL_ALIASES`` in
  ``lmms_eval/models/__init__.py``, read as literals from its syntax tree)
  and this package's own names. Models another package registers through the
  ``lmms_eval.models`` entry point (or ``LMMS_EVAL_PLUGINS``) are known only by
  calling that package's code, which imports lmms-eval: when such a package
  is installed, :func:`installed_models` says the list is open and an unknown
  model name is left for lmms-eval to judge.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import importlib.util
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .versions import lmms_eval_folder

__all__ = ["lmms_eval_folder", "task_folders", "installed_tasks", "our_tasks", "installed_models", "InstalledModels",
           "closest", "unknown_task_problem", "unknown_model_problem", "wrapper_arg_names", "OUR_MODELS",
           "TASK_LIST_HINT", "MODEL_LIST_HINT", "is_task_listing"]

TASK_LIST_HINT = "`lmms-eval --tasks list` lists every installed task"
MODEL_LIST_HINT = "`lmms-eval models` lists lmms-eval's own"
LISTINGS = ("list", "list_groups", "list_tags", "list_subtasks")  # what lmms-eval's --tasks prints instead of running


def _our_models() -> tuple[str, ...]:
    from .bridges.manifest import BRIDGES
    from .ours import PROBES

    return (*PROBES, *BRIDGES)


OUR_MODELS = _our_models()


# ------------------------------------------------------------------ where lmms-eval is

def _plugin_task_folders() -> list[Path]:
    """The ``tasks`` folder of each ``LMMS_EVAL_PLUGINS`` package (lmms-eval adds them to its search path)."""
    out = []
    for plugin in filter(None, (p.strip() for p in os.environ.get("LMMS_EVAL_PLUGINS", "").split(","))):
        try:
            spec = importlib.util.find_spec(plugin.split(".")[0])
        except (ImportError, ValueError):
            continue
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            out.append(Path(loc, *plugin.split(".")[1:], "tasks"))
    return out


def task_folders(include_paths: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The folders lmms-eval's ``TaskManager`` indexes for a CLI run with these ``--include_path`` values."""
    from .ours import task_path
    from .versions import auto_task_folder

    folders = []
    root = lmms_eval_folder()
    if root is not None:
        folders.append(root / "tasks")
    folders += [Path(p) for p in include_paths if p]
    if auto_task_folder():
        folders.append(task_path())
    folders += _plugin_task_folders()
    return folders


# ------------------------------------------------------------------ task names

_KEY = re.compile(r"""^(["']?)(task|group|tag|include|class)\1[ \t]*:(.*)$""")  # a key may be quoted
_ITEM = re.compile(r"^[ \t]*-[ \t]*(.*)$")


def _scalar(text: str) -> str:
    """A YAML scalar as written on one line: comment dropped, quotes removed."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else text[1:]
    return re.split(r"[ \t]+#", text, maxsplit=1)[0].strip()


def _top_level(path: Path) -> dict:
    """The top-level keys ``task``/``group``/``tag``/``include``/``class`` of one YAML file: a string, or a list
    (of strings, with ``{}`` for each mapping of a list of mappings), as far as a line reader can tell."""
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")  # a BOM may lead
    except OSError:
        return {}
    out: dict = {}
    key, item_indent = None, None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0 and not stripped.startswith("-"):  # a top-level key
            key, item_indent = None, None
            m = _KEY.match(line)
            if m is None:
                continue
            name, rest = m.group(2), _scalar(m.group(3))
            if rest.startswith("[") and rest.endswith("]"):
                out[name] = [_scalar(x) for x in rest[1:-1].split(",") if x.strip()]
            elif rest:
                out[name] = rest
            else:
                out[name], key = [], name  # a block list follows
        elif key is not None and stripped.startswith("-"):
            item_indent = indent if item_indent is None else item_indent
            if indent == item_indent:  # an item of the list itself, not of a list nested in one of its items
                item = stripped[1:].strip()
                out[key].append({} if re.match(r"^[\w.-]+[ \t]*:", item) else _scalar(item))
    return out


def _resolved(path: Path, cache: dict, depth: int = 0) -> dict:
    """The file's keys with its ``include`` chain merged in as lmms-eval merges it (last include first, the file's
    own keys over them)."""
    real = str(path)
    if real in cache:
        return cache[real]
    own = {k: v for k, v in _top_level(path).items() if not k.startswith("__")}
    includes = own.pop("include", None)
    merged: dict = {}
    if includes and depth < 20:
        for inc in reversed([includes] if isinstance(includes, str) else [i for i in includes if isinstance(i, str)]):
            target = Path(inc) if os.path.isfile(inc) else path.parent / inc
            merged.update(_resolved(target, cache, depth + 1))
    merged.update(own)
    cache[real] = merged
    return merged


def _index_folder(folder: Path, cache: dict) -> dict[str, str]:
    """``{name: task | group | tag | python_task}`` of one folder, as ``TaskManager._get_task_and_group``."""
    index: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".ipynb_checkpoints")]
        for f in files:
            if not f.endswith(".yaml"):
                continue
            config = _resolved(Path(root, f), cache)
            task = config.get("task")
            if "class" in config and isinstance(task, str):
                index[task] = "python_task"
            elif isinstance(task, list) and isinstance(config.get("group"), str):
                index[config["group"]] = "group"
            elif isinstance(task, str):
                index[task] = "task"
                for attr in ("tag", "group"):
                    for tag in [config[attr]] if isinstance(config.get(attr), str) else config.get(attr) or []:
                        if isinstance(tag, str) and index.get(tag, "tag") == "tag":
                            index[tag] = "tag"
    return index


def installed_tasks(include_paths: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """Every task, group and tag name lmms-eval would know for a run with these ``--include_path`` values."""
    return dict(_installed_tasks(tuple(str(p) for p in include_paths)))


@lru_cache(maxsize=8)
def _installed_tasks(include_paths: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    cache: dict = {}
    index: dict[str, str] = {}
    for folder in task_folders(include_paths):
        if folder.is_dir():
            index.update(_index_folder(folder, cache))
    return tuple(index.items())


def our_tasks() -> dict[str, str]:
    """This package's task, group and tag names (its task folder alone), as :func:`installed_tasks` gives them."""
    from .ours import task_path

    return _index_folder(task_path(), {})


def is_task_listing(tasks: str) -> bool:
    """``--tasks list`` and its kin: lmms-eval prints names instead of running."""
    return tasks.strip() in LISTINGS


def closest(name: str, known, n: int = 3) -> list[str]:
    """The known names closest to ``name`` (difflib), best first; a name that contains ``name`` (or the other
    way round) counts as close too."""
    known = sorted(set(known))
    found = difflib.get_close_matches(name, known, n=n, cutoff=0.75)
    if len(found) < n and len(name) >= 4:
        found += [k for k in known if k not in found and (name in k or k in name)][: n - len(found)]
    if not found:
        found = difflib.get_close_matches(name, known, n=n, cutoff=0.6)
    return found


def _did_you_mean(name: str, known) -> str:
    near = closest(name, known)
    return f" (did you mean {' or '.join(near)}?)" if near else ""


def unknown_task_problem(tasks: str, include_paths: list[str] | tuple[str, ...] = ()) -> str | None:
    """One line naming the first task of a comma-separated ``--tasks`` that lmms-eval would not find, the closest
    known names and where to list them; None when every name is known (or lmms-eval is not installed: the run
    then says so itself). Names that are paths of YAML files or folders, and patterns with ``*``, are lmms-eval's
    to read; a pattern that matches no task is refused like an unknown name."""
    if is_task_listing(tasks) or os.path.isdir(tasks):
        return None
    if lmms_eval_folder() is None:
        return None
    known = installed_tasks(include_paths)
    for name in (t.strip() for t in tasks.split(",")):
        if not name or name in known or os.path.isfile(name):
            continue
        if any(c in name for c in "*?["):
            if fnmatch.filter(known, name):
                continue
            return f"task pattern {name!r} matches no installed task; {TASK_LIST_HINT}"
        return f"unknown task {name!r}{_did_you_mean(name, known)}; {TASK_LIST_HINT}"
    return None


# ------------------------------------------------------------------ model names

@dataclass(frozen=True)
class InstalledModels:
    names: frozenset[str]
    open_to: tuple[str, ...] = ()  # other packages whose models are known only to their own code

    def knows(self, name: str) -> bool:
        return name in self.names

    @property
    def complete(self) -> bool:
        return not self.open_to


def _literal_dicts(path: Path, wanted: tuple[str, ...]) -> dict[str, dict]:
    """Module-level ``NAME = {...}`` literals of a Python file, read from its syntax tree (never executed)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    out = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        for t in targets:
            if isinstance(t, ast.Name) and t.id in wanted and node.value is not None:
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    out[t.id] = value
    return out


def _own_distribution(ep) -> bool:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", "") or ""
    return re.sub(r"[-_.]+", "-", name).lower() == "medhorizon-tasks" or ep.value.startswith("medhorizon_tasks.")


@lru_cache(maxsize=1)
def installed_models() -> InstalledModels:
    """lmms-eval's built-in model names and aliases, and this package's; ``open_to`` names the other packages
    that register models through lmms-eval's entry point (their names are not known here)."""
    from importlib.metadata import entry_points

    names = set(OUR_MODELS)
    root = lmms_eval_folder()
    if root is not None:
        tables = _literal_dicts(root / "models" / "__init__.py",
                                ("AVAILABLE_SIMPLE_MODELS", "AVAILABLE_CHAT_TEMPLATE_MODELS", "MODEL_ALIASES"))
        names |= set(tables.get("AVAILABLE_SIMPLE_MODELS", {})) | set(tables.get("AVAILABLE_CHAT_TEMPLATE_MODELS", {}))
        for aliases in tables.get("MODEL_ALIASES", {}).values():
            names |= {a for a in aliases if isinstance(a, str)}
    others = [f"{ep.name} ({getattr(getattr(ep, 'dist', None), 'name', '?')})"
              for ep in entry_points(group="lmms_eval.models") if not _own_distribution(ep)]
    if os.environ.get("LMMS_EVAL_PLUGINS", "").strip():
        others.append(f"LMMS_EVAL_PLUGINS={os.environ['LMMS_EVAL_PLUGINS']}")
    return InstalledModels(frozenset(names), tuple(others))


def unknown_model_problem(model: str, *, label: str | None = None) -> str | None:
    """One line naming ``model`` (as ``label`` says it: ``--model NAME`` by default) when lmms-eval would not know
    it, the closest names and where to list them; None when it is known, or when another installed package may register it (its own code would say)."""
    if lmms_eval_folder() is None:
        return None
    models = installed_models()
    if models.knows(model) or not models.complete:
        return None
    ours = ", ".join(OUR_MODELS[:2]) + ", medhorizon_qwen3_vl, ..."
    return (f"{label or '--model ' + model}: unknown model{_did_you_mean(model, models.names)}; {MODEL_LIST_HINT}, this "
            f"package adds {ours} (docs/models.md)")


# ------------------------------------------------------------------ a wrapper's arguments

@lru_cache(maxsize=64)
def wrapper_arg_names(wrapper: str) -> frozenset[str] | None:
    """The named ``__init__`` parameters of lmms-eval's simple wrapper ``wrapper`` (e.g. ``qwen2_5_vl``) and its
    bases within lmms-eval, read from its source (never imported); None when its source cannot be read."""
    root = lmms_eval_folder()
    if root is None:
        return None
    classes = _literal_dicts(root / "models" / "__init__.py", ("AVAILABLE_SIMPLE_MODELS",)).get(
        "AVAILABLE_SIMPLE_MODELS", {})
    cls = classes.get(wrapper)
    if not isinstance(cls, str):
        return None
    if "." in cls:
        module, _, cls = cls.rpartition(".")
        path = root.parent.joinpath(*module.split(".")).with_suffix(".py")
    else:
        path = root / "models" / "simple" / f"{wrapper}.py"
    return _init_names(path, cls, root, 0)


def _init_names(path: Path, cls: str, root: Path, depth: int) -> frozenset[str] | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    imported = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lmms_eval."):
            for a in node.names:
                imported[a.asname or a.name] = root.parent.joinpath(*node.module.split(".")).with_suffix(".py")
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        names: set[str] = set()
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                a = item.args
                names |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]} - {"self"}
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in imported and depth < 5 and base.id != "lmms":
                more = _init_names(imported[base.id], base.id, root, depth + 1)
                if more is None:
                    return None
                names |= more
            elif isinstance(base, ast.Name) and base.id != "lmms" and depth < 5:
                more = _init_names(path, base.id, root, depth + 1)  # a base in the same module
                if more is None:
                    return None
                names |= more
        return frozenset(names)
    return None
