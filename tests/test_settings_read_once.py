"""Every ``MEDHORIZON_*`` variable the package reads goes through core/settings.py, which names the variable, the
value and what it accepts; read straight from ``os.environ`` anywhere else, a bad value would again be a traceback
or a silent other meaning. Checked on the source: any read of the environment outside core/settings.py must name
its variable, and that name must not be a ``MEDHORIZON_`` one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "medhorizon_tasks"
HELPER = PKG / "core" / "settings.py"


def _constants(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def _all_constants() -> dict[str, set[str]]:
    """Every module-level text constant of the package, by name (a name may mean several values)."""
    out: dict[str, set[str]] = {}
    for path in PKG.rglob("*.py"):
        for name, value in _constants(ast.parse(path.read_text(encoding="utf-8"))).items():
            out.setdefault(name, set()).add(value)
    return out


def _is_environ(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def _env_reads(tree: ast.Module):
    """(line, key node) of every ``os.environ.get(k)``, ``os.getenv(k)``, ``os.environ[k]`` and ``k in os.environ``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            f = node.func
            if (f.attr == "get" and _is_environ(f.value)) or (f.attr == "getenv" and isinstance(f.value, ast.Name)
                                                              and f.value.id == "os"):
                yield node.lineno, node.args[0]
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
            yield node.lineno, node.slice


def test_no_medhorizon_variable_is_read_around_the_helper():
    constants = _all_constants()
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        if path == HELPER:
            continue
        for line, key in _env_reads(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(PKG)}:{line}"
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if key.value.startswith("MEDHORIZON_"):
                    offenders.append(f"{where}: {key.value}")
            elif isinstance(key, ast.Name) and key.id in constants:
                if any(v.startswith("MEDHORIZON_") for v in constants[key.id]):
                    offenders.append(f"{where}: {key.id}")
            else:  # a name read at run time: it may be a MEDHORIZON_ one; the helper reads it
                offenders.append(f"{where}: {ast.unparse(key)} (not a named variable)")
    assert offenders == []


def test_a_store_size_of_inf_stops_a_run_at_its_start_naming_the_variable(tmp_path):
    """Through the real lmms-eval CLI start-up (what ``medhorizon-tasks run`` starts): one line, exit 2, before a
    model is loaded; a negative size is refused the same way instead of turning the store off."""
    import os

    for value in ("inf", "-1"):
        env = {**os.environ, "MEDHORIZON_PLAN_STORE_MB": value}
        proc = subprocess.run([sys.executable, "-m", "lmms_eval", "--model", "medhorizon_needle", "--tasks",
                               "medhorizon_synthetic", "--limit", "1", "--output_path", str(tmp_path / value)],
                              env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert f"$MEDHORIZON_PLAN_STORE_MB={value!r} is not a setting it accepts: expected a finite number of " \
               "megabytes from 0" in proc.stderr
        assert "Traceback" not in proc.stderr and "OverflowError" not in proc.stderr
