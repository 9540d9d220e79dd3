"""The start-up guard: built-in wrappers known to mishandle a frame list are refused, with the bridge to use."""

import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval.bridges.guard import ALLOW_ENV, MISHANDLING, frame_list_problem, frame_tasks
from medhorizon_tasks.adapters.lmms_eval.bridges.manifest import BRIDGES

# measured with lmms-eval 0.7.3 (the table)
MEASURED = ["qwen2_5_vl", "qwen3_vl", "videollama3", "llava_vid", "minicpm_v", "videochat_flash", "llava_onevision",
            "internvl3", "internvl3_5", "gemini"]
PROBES = ["medhorizon_random", "medhorizon_needle"]
NO_ENV: dict = {}


@pytest.mark.parametrize("name", sorted(MISHANDLING))
def test_each_mishandling_wrapper_is_refused_with_the_message(name):
    found = MISHANDLING[name]
    message = frame_list_problem(name, ["medhorizon_synthetic"], environ=NO_ENV)
    assert message is not None
    assert f"lmms-eval's `{name}` wrapper {found.does}" in message
    assert "medhorizon_synthetic" in message and f"set {ALLOW_ENV}=1" in message
    if found.bridge:
        assert f"Use --model {found.bridge} (the same --model_args" in message
        assert found.bridge in BRIDGES
    else:
        assert "no native-video bridge" in message


def test_the_measured_wrappers_are_all_known():
    assert set(MEASURED) <= set(MISHANDLING)
    assert frame_list_problem("gemini_api", "medhorizon", environ=NO_ENV) is not None  # lmms-eval's alias


def test_bridges_name_the_wrapper_they_replace():
    loader_only = {"medhorizon_molmo2", "medhorizon_hulu_med"}  # subclasses gemma4 for its generic loading; replaces no wrapper
    for bridge, (_, wrapper) in BRIDGES.items():
        if wrapper in MISHANDLING and bridge not in loader_only:
            assert MISHANDLING[wrapper].bridge == bridge


@pytest.mark.parametrize("name", PROBES + sorted(BRIDGES) + ["openai", "no_such_model"])
def test_probes_bridges_and_other_models_pass(name):
    assert frame_list_problem(name, ["medhorizon_synthetic", "sureon_visual", "surghi"], environ=NO_ENV) is None


def test_resume_wrapper_is_looked_through():
    message = frame_list_problem("medhorizon_resume", ["medhorizon"],
                                 "inner=qwen2_5_vl,journal=runs/q.journal,pretrained=Qwen/Qwen2.5-VL-7B-Instruct",
                                 environ=NO_ENV)
    assert "`qwen2_5_vl` wrapper (as inner=qwen2_5_vl of medhorizon_resume)" in message
    assert "Use inner=medhorizon_qwen2_5_vl" in message
    assert frame_list_problem("medhorizon_resume", ["medhorizon"], {"inner": "llava_vid", "journal": "j"},
                              environ=NO_ENV) is not None
    for inner in ("medhorizon_qwen2_5_vl", "medhorizon_needle"):
        assert frame_list_problem("medhorizon_resume", ["medhorizon"], f"inner={inner},journal=j",
                                  environ=NO_ENV) is None


def test_only_tasks_of_this_package_that_show_frames_count():
    assert frame_tasks("medhorizon_synthetic,videomme, sureon_visual,surghi_synthetic") == [
        "medhorizon_synthetic", "sureon_visual", "surghi_synthetic"]
    for tasks in (["videomme", "mlvu"], ["medhorizon_text", "medhorizon_synthetic_text", "sureon_blind"], []):
        assert frame_list_problem("qwen2_5_vl", tasks, environ=NO_ENV) is None
    assert frame_list_problem("qwen2_5_vl", ["videomme", "medhorizon_cap768"], environ=NO_ENV) is not None
    assert "medhorizon_all" in frame_list_problem("qwen3_vl", "medhorizon_all", environ=NO_ENV)  # groups too


def test_explicit_opt_out(monkeypatch):
    for value in ("1", "true", "YES"):
        assert frame_list_problem("qwen2_5_vl", ["medhorizon"], environ={ALLOW_ENV: value}) is None
    assert frame_list_problem("qwen2_5_vl", ["medhorizon"], environ={ALLOW_ENV: "0"}) is not None
    monkeypatch.setenv(ALLOW_ENV, "1")
    assert frame_list_problem("qwen2_5_vl", ["medhorizon"]) is None
    monkeypatch.delenv(ALLOW_ENV)
    assert frame_list_problem("qwen2_5_vl", ["medhorizon"]) is not None


def test_guard_and_manifest_import_nothing_heavy():
    """Both are imported while lmms-eval starts; neither may pull in torch, transformers or lmms-eval."""
    code = ("import sys\n"
            "import medhorizon_tasks.adapters.lmms_eval.bridges.guard\n"
            "import medhorizon_tasks.adapters.lmms_eval.bridges.manifest\n"
            "import medhorizon_tasks.benchmarks.medhorizon.model_settings\n"
            "print(sorted(m for m in ('torch', 'transformers', 'lmms_eval', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
