"""What differs between the VLMEvalKit installs this package supports, in one place.

VLMEvalKit comes as two distributions of the one module ``vlmeval``:

* a **git checkout** installed editable (``pip install -e .``: distribution ``vlmeval``), upstream's own way; its
  ``run.py`` sits at the checkout root, beside the package, and ``vlmeval.run`` does not exist;
* **ms-vlmeval** from PyPI, which ships the same ``run.py`` inside the package (``vlmeval/run.py``).

Both are supported (:data:`SUPPORTED`). The launcher calls ``run.py``'s ``main()`` wherever the install keeps it
(:func:`run_script`, :func:`run_module`). Installed together, the two shadow each other without a word from pip
(one ``vlmeval`` folder wins on ``sys.path``): :func:`providers` lists every distribution that provides the
module and :func:`shadow_problem` says which one ``import vlmeval`` takes. Nothing here imports VLMEvalKit but
:func:`run_module`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SUPPORTED", "TESTED_COMMIT", "INSTALL_LINES", "Provider", "providers", "imported_from",
           "running_provider", "shadow_problem", "range_problem", "run_script", "run_module", "import_problem"]

#: distribution -> the versions this package is tested with (docs/stacks.md says what ran against each)
SUPPORTED = {"vlmeval": ">=0.1.0,<0.2", "ms-vlmeval": ">=0.0.20,<0.0.21"}
#: the upstream git commit the checkout layout was checked against by hand (docs/stacks.md)
TESTED_COMMIT = "e8e78f05"
INSTALL_LINES = {
    "vlmeval": "git clone https://github.com/open-compass/VLMEvalKit && pip install -e ./VLMEvalKit && "
               "pip install \"medhorizon-tasks[vlmeval]\"",
    "ms-vlmeval": "pip install \"medhorizon-tasks[vlmeval-pypi]\"",
}
_RUN_MODULE = "medhorizon_tasks_vlmeval_run"  # the name a checkout's run.py is loaded under


@dataclass(frozen=True)
class Provider:
    """An installed distribution that provides the module ``vlmeval``: its name, version and the folder its
    ``vlmeval`` package lives in (None when its files do not say)."""

    distribution: str
    version: str
    package: Path | None
    editable: bool

    def describe(self) -> str:
        where = f" at {self.package}" if self.package else ""
        return f"{self.distribution} {self.version}{' (editable)' if self.editable else ''}{where}"


def _direct_url(dist) -> dict:
    try:
        text = dist.read_text("direct_url.json")
        value = json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _package_folder(dist, direct: dict) -> Path | None:
    url = str(direct.get("url") or "")
    if url.startswith("file://") and (direct.get("dir_info") or {}).get("editable"):
        candidate = Path(url[len("file://"):]) / "vlmeval"
        if (candidate / "__init__.py").is_file():
            return candidate
    for file in dist.files or ():
        if file.parts[:1] == ("vlmeval",) and file.name == "__init__.py" and len(file.parts) == 2:
            return Path(str(dist.locate_file(file))).parent
    return None


def providers() -> list[Provider]:
    """Every installed distribution that provides the module ``vlmeval`` (its files, its top-level names, or an
    editable checkout holding a ``vlmeval`` package)."""
    from importlib.metadata import distributions

    out, seen = [], set()
    for dist in distributions():
        name = (dist.metadata["Name"] or "").strip()
        key = name.lower().replace("_", "-")
        if not name or key in seen:
            continue
        direct = _direct_url(dist)
        package = _package_folder(dist, direct)
        top = (dist.read_text("top_level.txt") or "").split()
        if package is None and "vlmeval" not in top:
            continue
        seen.add(key)
        out.append(Provider(name, dist.version, package, bool((direct.get("dir_info") or {}).get("editable"))))
    return out


def imported_from() -> Path | None:
    """The folder ``import vlmeval`` would load, found without importing it."""
    try:
        spec = importlib.util.find_spec("vlmeval")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]).resolve() if locations else None


def running_provider(found: list[Provider] | None = None) -> Provider | None:
    """The provider whose ``vlmeval`` folder ``import vlmeval`` takes."""
    found = providers() if found is None else found
    where = imported_from()
    for p in found:
        if p.package is not None and where is not None and p.package.resolve() == where:
            return p
    return found[0] if len(found) == 1 else None


def shadow_problem(found: list[Provider] | None = None) -> str | None:
    """One line when more than one distribution provides ``vlmeval``: which one runs, and how to keep one."""
    found = providers() if found is None else found
    if len(found) < 2:
        return None
    runs = running_provider(found)
    others = [p for p in found if p != runs]
    names = " and ".join(p.describe() for p in found)
    taken = f"`import vlmeval` takes {runs.describe()}" if runs else f"`import vlmeval` takes {imported_from()}"
    drop = " ".join(p.distribution for p in others if p.distribution != "vlmeval") or \
        " ".join(p.distribution for p in others)
    return (f"two distributions provide the module vlmeval: {names}; {taken}, the other is shadowed. Keep one: "
            f"`pip uninstall {drop}`")


def range_problem(provider: Provider) -> str | None:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    key = provider.distribution.lower().replace("_", "-")
    wanted = SUPPORTED.get(key)
    if wanted is None:
        return (f"{provider.describe()} is not a VLMEvalKit this package supports (supported: "
                f"{', '.join(f'{k}{v}' for k, v in SUPPORTED.items())})")
    try:
        if Version(provider.version) in SpecifierSet(wanted):
            return None
    except InvalidVersion:
        pass
    return f"{provider.describe()} is outside the supported range {key}{wanted}"


def run_script(package: Path | None = None) -> Path | None:
    """VLMEvalKit's ``run.py``: inside the package (ms-vlmeval) or at the checkout root beside it (git)."""
    package = imported_from() if package is None else package
    if package is None:
        return None
    for candidate in (package / "run.py", package.parent / "run.py"):
        if candidate.is_file():
            return candidate
    return None


def run_module():
    """The module of VLMEvalKit's ``run.py`` (imports VLMEvalKit): ``vlmeval.run`` where the package ships it, else
    the checkout's root ``run.py`` loaded by its path (once). ``ImportError`` when neither exists."""
    script = run_script()
    if script is None:
        raise ImportError("VLMEvalKit's run.py was found neither in the vlmeval package nor beside it",
                          name="vlmeval.run")
    if script.parent.name == "vlmeval":
        import vlmeval.run

        return vlmeval.run
    if _RUN_MODULE in sys.modules:
        return sys.modules[_RUN_MODULE]
    spec = importlib.util.spec_from_file_location(_RUN_MODULE, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_RUN_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(_RUN_MODULE, None)
        raise
    return module


def import_problem(exc: ImportError) -> str:
    """One line for VLMEvalKit failing to import: the missing module and the line that installs it."""
    missing = (exc.name or "").split(".")[0]
    if not missing or missing == "vlmeval":
        if imported_from() is None:
            return ("VLMEvalKit is not installed (no module vlmeval). From its git checkout: "
                    f"`{INSTALL_LINES['vlmeval']}`; from PyPI: `{INSTALL_LINES['ms-vlmeval']}`")
        return f"VLMEvalKit at {imported_from()} could not be loaded ({exc}); `medhorizon-tasks doctor` says more"
    return (f"VLMEvalKit could not be imported: no module named {missing!r} (VLMEvalKit at {imported_from()} "
            f"imports it); install it: `pip install {missing}`")
