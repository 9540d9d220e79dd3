"""Virtual environments holding another version of a framework, with this package installed into them as a user
would: the framework first, then ``pip install -e ".[lmms]"``. Built from PyPI once (a fresh one takes a few
minutes and ~7 GB: torch comes with lmms-eval) and kept under ``.cache/framework-venvs/`` in the repository
(``$MEDHORIZON_TEST_VENVS`` moves it); rebuilt when it is incomplete, and this package reinstalled (fast, no
downloads) when ``pyproject.toml`` changed, since its entry points are read from the install. Another version's
venv starts as a hard-linked copy of a finished one (pip then replaces only what differs: seconds, not minutes).
torch, torchvision and torch's CUDA libraries are the test runner's own, linked in when they are the versions the
frameworks bring (:func:`_torch_layer`): pip installs the rest, lmms-eval first, as it would for a user.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
ROOT = Path(os.environ.get("MEDHORIZON_TEST_VENVS") or REPO / ".cache" / "framework-venvs")
# lmms-eval brings these; named so that pip takes the pair that works together (docs: frameworks)
TORCH = ("torch==2.14.1", "torchvision==0.29.1")


def _pip(python: Path, *args: str, log: Path) -> None:
    with open(log, "a", encoding="utf-8") as fh:
        subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", *args],
                       check=True, stdout=fh, stderr=subprocess.STDOUT)


def _shares_torch(dist_name: str) -> bool:
    n = dist_name.lower().replace("_", "-")
    return n in ("torch", "torchvision", "triton") or n.startswith(("nvidia-", "cuda-"))


def _torch_layer() -> Path | None:
    """A folder of links to the test runner's own torch, torchvision and torch's CUDA libraries (their import
    folders and ``.dist-info``), when they are the versions the frameworks bring (``TORCH``): a ``.pth`` line in a
    framework venv puts it on ``sys.path``, so pip finds ``torch==2.14.1`` already there and installs everything
    else as it would for a user (~5 GB less to unpack: minutes of CI). None (a full install) otherwise, or with
    ``$MEDHORIZON_TEST_TORCH_LAYER=0``."""
    from importlib import metadata

    if os.environ.get("MEDHORIZON_TEST_TORCH_LAYER") == "0":
        return None
    wanted = dict(r.split("==") for r in TORCH)
    try:
        if any(metadata.version(name) != version for name, version in wanted.items()):
            return None
    except metadata.PackageNotFoundError:
        return None
    site = Path(metadata.distribution("torch").locate_file(""))
    dists = [d for d in metadata.distributions(path=[str(site)]) if _shares_torch(d.metadata["Name"] or "")]
    names = sorted({Path(str(f)).parts[0] for d in dists for f in d.files or () if not str(f).startswith("..")})
    key = hashlib.sha256("\n".join([str(site), *names, *(f"{d.metadata['Name']}={d.version}" for d in dists)])
                         .encode()).hexdigest()[:12]
    layer = ROOT / f"torch-layer-{key}"
    with FileLock(str(ROOT / "torch-layer.lock")):
        if not (layer / ".ready").is_file():
            layer.mkdir(parents=True, exist_ok=True)
            for name in names:
                link = layer / name
                if not link.is_symlink():
                    link.symlink_to(site / name)
            (layer / ".ready").write_text(str(site))
    return layer


def _seed(venv: Path) -> Path | None:
    """A finished venv of another lmms-eval version to start ``venv`` from (``$MEDHORIZON_TEST_VENV_SEED=0`` for
    none)."""
    if os.environ.get("MEDHORIZON_TEST_VENV_SEED") == "0":
        return None
    done = [p.parent for p in ROOT.glob("lmms-eval-*/.framework-ready") if p.parent != venv]
    return sorted(done)[0] if done else None


def lmms_eval_venv(version: str) -> Path:
    """A venv with ``lmms-eval==version`` installed first (or, when ``version`` is a folder, that lmms-eval
    checkout installed editable) and this package (``[lmms]``, editable) after it."""
    ROOT.mkdir(parents=True, exist_ok=True)
    checkout = os.sep in version
    name = f"git-{hashlib.sha256(version.encode()).hexdigest()[:8]}" if checkout else version
    venv = ROOT / f"lmms-eval-{name}"
    python = venv / "bin" / "python"
    requirement = ["-e", version] if checkout else [f"lmms-eval=={version}"]
    want = f"{' '.join(requirement)} {hashlib.sha256((REPO / 'pyproject.toml').read_bytes()).hexdigest()}"
    ready = venv / ".medhorizon-ready"
    with FileLock(str(ROOT / f"lmms-eval-{name}.lock")):
        if ready.is_file() and ready.read_text() == want:
            return venv
        log = ROOT / f"lmms-eval-{name}.log"
        framework = venv / ".framework-ready"
        if not framework.is_file():
            if not python.exists():
                seed = _seed(venv)
                if seed is not None:  # another version's venv, hard-linked: pip replaces only what differs
                    subprocess.run(["cp", "-al", str(seed), str(venv)], check=True)
                    for marker in (venv / ".framework-ready", ready):
                        marker.unlink(missing_ok=True)
                else:
                    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                    layer = _torch_layer()
                    if layer is not None:
                        site = next((venv / "lib").glob("python*/site-packages"))
                        (site / "zz_shared_torch.pth").write_text(f"{layer}\n")
            _pip(python, *requirement, *TORCH, log=log)  # over whatever is there: never a cleared venv
            framework.write_text(version)
        _pip(python, "-e", f"{REPO}[lmms]", log=log)
        ready.write_text(want)
    return venv
