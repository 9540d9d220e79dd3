"""Names and model args checked before a framework starts (issue 39 items 1-2; issue 38 items 4, 7, 8).

Through the real command: a typo'd task, model name or model arg, a number a model arg cannot be, ``--limit 0``
and ``diagnose attention`` with a model it cannot measure are each refused with ONE line, exit status 2, no
traceback, and (for lmms-eval) no ``lmms_eval`` module imported: the import trace of the command
(``PYTHONPROFILEIMPORTTIME``) names every module it imported. The index of names read from lmms-eval's files is
checked against lmms-eval's own ``TaskManager`` and model registry, the wrappers' args read from their source
against their signatures."""

import argparse
import importlib
import inspect
import os
import re
import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval import installed
from medhorizon_tasks.adapters.lmms_eval.bridges.manifest import BRIDGES
from medhorizon_tasks.adapters.lmms_eval.model_args import (
    EVALUATOR_ARGS,
    SPECS,
    ModelArgsError,
    model_args_problem,
    parse_model_args,
)
from medhorizon_tasks.adapters.lmms_eval.ours import PROBES, task_path

IMPORTED = re.compile(r"^import time:.*\|\s*(\S+)\s*$")


def _command(argv, tmp_path, timeout=180, env=None):
    """The real command with an import trace; (status, the lines it said, the modules it imported)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", **(env or {})}
    res = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", *argv], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=timeout)
    said, modules = [], set()
    for line in (res.stdout + res.stderr).splitlines():
        m = IMPORTED.match(line)
        if m:
            modules.add(m.group(1).strip())
        elif line.strip() and not line.startswith("import time:"):  # the trace's header
            said.append(line)
    return res.returncode, said, modules


def _refused_in_one_line(argv, tmp_path, *fragments, framework="lmms_eval"):
    status, said, modules = _command(argv, tmp_path)
    assert status == 2, said
    assert len(said) == 1, said
    assert "Traceback" not in said[0]
    for fragment in fragments:
        assert fragment in said[0], said[0]
    started = sorted(m for m in modules if m == framework or m.startswith(framework + "."))
    assert not started, started  # refused before the framework was even imported
    return said[0]


# ------------------------------------------------------------------ through the real command

@pytest.mark.parametrize("argv, fragments", [
    (["--model", "medhorizon_needle", "--tasks", "medhorizon_synthtic"],
     ["unknown task 'medhorizon_synthtic'", "did you mean medhorizon_synthetic", "lmms-eval --tasks list"]),
    (["--model", "medhorizon_needle", "--tasks", "medhorizon_synthetic,videomm"],
     ["unknown task 'videomm'", "did you mean videomme"]),  # lmms-eval's own tasks are known too
    (["--model", "medhorizon_neddle", "--tasks", "medhorizon_synthetic"],
     ["--model medhorizon_neddle: unknown model", "did you mean medhorizon_needle", "lmms-eval models"]),
    (["--model", "medhorizon_needle", "--model_args", "sead=3", "--tasks", "medhorizon_synthetic"],
     ["sead", "did you mean seed", "it takes batch_size, delay_s, device, max_batch_size, record_path, seed"]),
    (["--model", "medhorizon_openai", "--model_args", "model=m,frame_as=video", "--tasks", "medhorizon_synthetic"],
     ["frame_as", "did you mean frames_as", "image_quality"]),
    (["--model", "medhorizon_needle", "--tasks", "medhorizon_synthetic", "--limit", "0"],
     ["--limit 0", "positive"]),
])
def test_run_refuses_a_wrong_name_or_arg_in_one_line_before_lmms_eval(argv, fragments, tmp_path):
    line = _refused_in_one_line(["run", *argv, "--output_path", "out"], tmp_path, *fragments)
    assert "MEDHORIZON_DATA" not in line  # a typo is never read as a release task
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("factor", ["0", "-28", "7"])
def test_a_number_a_model_arg_cannot_be_is_refused_before_lmms_eval(factor, tmp_path):
    _refused_in_one_line(["run", "--model", "medhorizon_openai", "--model_args",
                          f"model=m,frames_as=video,pixel_factor={factor}", "--tasks", "medhorizon_synthetic",
                          "--output_path", "out"], tmp_path, f"pixel_factor={factor}", "even integer >= 14")


@pytest.mark.parametrize("argv, fragments", [
    (["sweep", "--model", "medhorizon_neddle"], ["unknown model", "did you mean medhorizon_needle"]),
    (["sweep", "--model", "medhorizon_needle", "--model_args", "sead=3"], ["did you mean seed"]),
    (["diagnose", "budgets", "--model", "medhorizon_needle", "--limit", "0"], ["--limit 0"]),
    (["diagnose", "evidence", "--model", "medhorizon_qwen3_vl", "--model_args", "frame_min_pixels=0"],
     ["frame_min_pixels=0", "integer >= 1"]),
    (["diagnose", "attention", "--model", "medhorizon_needle"],
     ["--model medhorizon_needle", "medhorizon_qwen2_5_vl and medhorizon_qwen3_vl only"]),
    (["diagnose", "attention", "--model", "medhorizon_openai", "--model_args", "model=gpt-5"],
     ["medhorizon_qwen2_5_vl and medhorizon_qwen3_vl"]),
    (["diagnose", "attention", "--model", "medhorizon_qwen3_vl", "--limit", "0"], ["--limit 0"]),
])
def test_diagnose_and_sweep_refuse_before_anything_starts(argv, fragments, tmp_path):
    _refused_in_one_line([*argv, "--synthetic", "--out", "diag"], tmp_path, *fragments)
    assert not (tmp_path / "diag").exists()


def test_demo_refuses_limit_0_before_building_anything(tmp_path):
    _refused_in_one_line(["demo", "--limit", "0", "--out", "demo"], tmp_path, "--limit 0")
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("argv, fragments", [
    (["--model", "medhorizon_neddle", "--data", "MedHorizon_Synthetic_cap64"], ["did you mean medhorizon_needle"]),
    (["--model", "medhorizon_needle", "--data", "MedHorizon_Synthetic_cap6"],
     ["unknown dataset", "did you mean MedHorizon_Synthetic_cap64"]),
    (["--model", "medhorizon_needle", "--data", "MedHorizon_Synthetic_cap64", "--limit", "0"], ["--limit 0"]),
])
def test_vlmeval_refuses_this_packages_names_before_vlmevalkit(argv, fragments, tmp_path):
    _refused_in_one_line(["vlmeval", *argv, "--work-dir", "out"], tmp_path, *fragments, framework="vlmeval")


def test_vlmeval_refuses_a_name_vlmevalkit_does_not_know_before_it_runs(tmp_path):
    status, said, _ = _command(["vlmeval", "--model", "Qwen2.5-VL-7B-Instructt", "--data",
                                "MedHorizon_Synthetic_cap64", "--work-dir", "out"], tmp_path, timeout=600)
    # VLMEvalKit's own complaint about a missing .env; the progress of the stamp's video identities (computed
    # before VLMEvalKit is imported, so that stale predictions are refused without it)
    said = [s for s in said if "load_env" not in s and not re.search(r"\d+%\|", s)]
    assert status == 2 and len(said) == 1, said
    assert "unknown to VLMEvalKit (did you mean Qwen2.5-VL-7B-Instruct" in said[0]


def test_vlmeval_refuses_a_probe_option_it_does_not_take(tmp_path):
    config = tmp_path / "run.json"
    config.write_text('{"model": {"p": {"class": "MedHorizonNeedleProbe", "sead": 3}}, '
                      '"data": {"MedHorizon_Synthetic_cap64": {}}}')
    _refused_in_one_line(["vlmeval", "--config", str(config), "--work-dir", "out"], tmp_path,
                         "takes no option 'sead'", "did you mean seed", framework="vlmeval")


def test_lmms_eval_start_up_says_the_typo_not_the_release(monkeypatch, capsys):
    """A direct ``lmms-eval`` run: the start-up hook answers a typo with the same line, not MEDHORIZON_DATA."""
    from medhorizon_tasks.adapters.lmms_eval import startup

    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    with pytest.raises(SystemExit) as stop:
        startup.check_cli_run(argparse.Namespace(tasks="medhorizon_synthtic", model="medhorizon_needle",
                                                 model_args="", include_path=None))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "unknown task 'medhorizon_synthtic'" in err and "MEDHORIZON_DATA" not in err
    with pytest.raises(SystemExit) as stop:
        startup.check_cli_run(argparse.Namespace(tasks="medhorizon_synthetic", model="medhorizon_openai",
                                                 model_args="model=m,frames_as=video,pixel_factor=0",
                                                 include_path=None))
    assert stop.value.code == 2 and "pixel_factor=0" in capsys.readouterr().err


# ------------------------------------------------------------------ the names, against lmms-eval's own

def test_task_names_read_from_the_files_are_lmms_evals_task_index():
    from lmms_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(task_path()))
    expected = {name: entry["type"] for name, entry in manager.task_index.items()}
    assert installed.installed_tasks() == expected


def test_model_names_read_from_the_files_are_lmms_evals_registry():
    from lmms_eval.models import MODEL_REGISTRY_V2

    assert installed.installed_models().names == set(MODEL_REGISTRY_V2.list_model_names())


def test_task_files_are_read_as_lmms_eval_reads_them(tmp_path):
    (tmp_path / "_template_yaml").write_text("tag:\n  - shared_tag\n")
    (tmp_path / "a.yaml").write_bytes("\ufeff\"task\": \"quoted_task\"\ninclude: _template_yaml\n".encode())
    (tmp_path / "b.yaml").write_text("group: my_group\ntask:\n  - quoted_task\n  - task: inline\n    x: 1\n")
    (tmp_path / "c.yaml").write_text("task: flow_tagged  # a comment\ntag: [t1, t2]\n")
    (tmp_path / "d.yaml").write_text("class: !function x.Y\ntask: py_task\n")
    names = installed.installed_tasks([str(tmp_path)])
    assert {k: names[k] for k in ("quoted_task", "shared_tag", "my_group", "flow_tagged", "t1", "t2", "py_task")} \
        == {"quoted_task": "task", "shared_tag": "tag", "my_group": "group", "flow_tagged": "task", "t1": "tag",
            "t2": "tag", "py_task": "python_task"}
    assert "inline" not in names
    assert installed.unknown_task_problem("flow_tagged", [str(tmp_path)]) is None
    assert "did you mean flow_tagged" in installed.unknown_task_problem("flow_taged", [str(tmp_path)])
    assert "matches no installed task" in installed.unknown_task_problem("nothing_like_this_*")
    assert installed.unknown_task_problem("medhorizon_synthetic_*") is None


def test_another_packages_models_are_left_to_lmms_eval(monkeypatch):
    from importlib.metadata import EntryPoint

    other = EntryPoint("theirs", "their_pkg.models:manifests", "lmms_eval.models")
    installed.installed_models.cache_clear()
    try:
        with monkeypatch.context() as m:
            m.setattr("importlib.metadata.entry_points", lambda group=None: [other])
            assert installed.unknown_model_problem("their_model") is None
        installed.installed_models.cache_clear()
        assert "unknown model" in installed.unknown_model_problem("their_model")
        with monkeypatch.context() as m:
            m.setenv("LMMS_EVAL_PLUGINS", "their_pkg")
            installed.installed_models.cache_clear()
            assert installed.unknown_model_problem("their_model") is None
    finally:
        installed.installed_models.cache_clear()


# ------------------------------------------------------------------ the args, against the models' own

_LLAVA_MODULES = ["lmms_eval.models.simple.llava_onevision", "lmms_eval.models.simple.llava_vid",
                  "lmms_eval.models.simple.longva", "medhorizon_tasks.adapters.lmms_eval.bridges.llava",
                  "medhorizon_tasks.adapters.lmms_eval.bridges.longva"]


@pytest.fixture(scope="module")
def importable():
    """The llava / longva packages some wrappers import are not installed here: stand-ins, only to import the
    wrapper classes (as tests/test_bridges_stubs.py does), removed afterwards."""
    from bridge_stubs import Recorder, install_llava_packages

    for name in _LLAVA_MODULES:
        sys.modules.pop(name, None)
    added = install_llava_packages(Recorder(), None, None, None)
    yield
    for name in added + _LLAVA_MODULES:
        sys.modules.pop(name, None)


def _named(init) -> set[str]:
    return {p.name for p in inspect.signature(init).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self"}


@pytest.mark.parametrize("wrapper", sorted({w for _, w in BRIDGES.values()}))
def test_a_wrappers_args_read_from_its_source_are_its_signature(wrapper, importable):
    from lmms_eval.models import AVAILABLE_SIMPLE_MODELS

    cls = getattr(importlib.import_module(f"lmms_eval.models.simple.{wrapper}"), AVAILABLE_SIMPLE_MODELS[wrapper])
    expected = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("lmms_eval.models.simple") and "__init__" in klass.__dict__:
            expected |= _named(klass.__dict__["__init__"])
    assert installed.wrapper_arg_names(wrapper) == expected


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_models_declared_args_are_the_ones_its_class_takes(name, importable):
    path = PROBES.get(name) or BRIDGES[name][0]
    module, _, cls_name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), cls_name)
    own = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("medhorizon_tasks") and "__init__" in klass.__dict__:
            own |= _named(klass.__dict__["__init__"])
    declared = {a.name for a in SPECS[name].args}
    if name == "medhorizon_openai":  # also the wrapper's args the bridge uses, and the budget it pops from kwargs
        from medhorizon_tasks.adapters.lmms_eval.bridges.vllm_video import BUDGET_ARGS

        assert own <= declared and declared <= own | set(BUDGET_ARGS) | installed.wrapper_arg_names("openai")
    else:
        assert own == declared


def test_lmms_eval_creating_a_model_checks_its_args():
    from medhorizon_tasks.adapters.lmms_eval.models import NeedleProbe

    with pytest.raises(ModelArgsError, match="did you mean seed"):
        NeedleProbe.create_from_arg_string("sead=3", {"batch_size": 1, "device": None})
    probe = NeedleProbe.create_from_arg_string("seed=3,delay_s=0", {"batch_size": 1, "max_batch_size": None})
    assert probe.seed == 3


@pytest.mark.parametrize("model, args, fragment", [
    ("medhorizon_openai", "image_quality=0", "from 1 to 100"),
    ("medhorizon_openai", "timeout=0", "> 0"),
    ("medhorizon_openai", "max_retries=0", "integer >= 1"),
    ("medhorizon_openai", "pixel_factor=32", "frames_as=video only"),
    ("medhorizon_openai", "frames_as=video,image_format=PNG", "JPEG frame sequence"),
    ("medhorizon_qwen2_5_vl", "frame_min_pixels=100,frame_max_pixels=50", "below frame_min_pixels"),
    ("medhorizon_internvl3", "frame_tiles=0", "integer >= 1"),
    ("medhorizon_resume", "inner=medhorizon_needle,journal=j,chunk=0", "chunk"),
    ("medhorizon_resume", "journal=j", "needs inner="),
    ("medhorizon_resume", "inner=medhorizon_neddle,journal=j", "did you mean medhorizon_needle"),
    ("medhorizon_resume", "inner=medhorizon_needle,journal=j,sead=1", "did you mean seed"),
    ("medhorizon_attention", "inner=medhorizon_qwen3_vl,out=o,layers=first", "layer indices"),
    ("medhorizon_needle", "delay_s=-1", "number >= 0"),
])
def test_out_of_range_and_unknown_args_are_one_line(model, args, fragment):
    problem = model_args_problem(model, parse_model_args(args))
    assert problem is not None and fragment in problem and "\n" not in problem


@pytest.mark.parametrize("model, args", [
    ("medhorizon_openai", "model=gpt-5,frames_as=video,pixel_factor=28,frame_max_pixels=50176,image_quality=90"),
    ("medhorizon_qwen3_vl", "pretrained=x,frame_min_pixels=3136,frame_max_pixels=50176,device=cpu"),
    ("medhorizon_resume", "inner=qwen2_5_vl,journal=j,anything=1"),  # another package's inner: its own judge
    ("medhorizon_attention", "inner=medhorizon_qwen3_vl,out=o,layers=0;12;-1,pretrained=p"),
    ("qwen2_5_vl", "whatever=1"),  # lmms-eval's own model: left to its wrapper
])
def test_what_a_model_takes_passes(model, args):
    assert model_args_problem(model, parse_model_args(args)) is None


def test_lmms_evals_own_args_to_every_model_are_taken():
    for name in SPECS:
        if not SPECS[name].wraps_inner:
            assert model_args_problem(name, dict.fromkeys(EVALUATOR_ARGS, 1)) is None, name
