"""Table 7 as data: every row of the paper's protocol tables, its task YAML, its command, and `protocol`."""

import argparse
import ast
from pathlib import Path

import pytest
import yaml

from medhorizon_tasks.adapters.lmms_eval.bridges.manifest import BRIDGES
from medhorizon_tasks.adapters.lmms_eval.runner import task_path
from medhorizon_tasks.benchmarks.medhorizon import model_settings as M
from medhorizon_tasks.benchmarks.request_rules import request_fields, rule_for
from medhorizon_tasks.benchmarks.sureon import model_settings as SUREON
from medhorizon_tasks.benchmarks.surghi import model_settings as SURGHI
from medhorizon_tasks.commands.protocol import add_parser
from medhorizon_tasks.core.errors import MedHorizonError

# (paper row, Input shown, cap/budget) as printed in the paper's Tables 6 and 7
PAPER = {
    "GPT-5.4-mini": ("1 FPS", 1248), "GPT-5.4": ("1 FPS", 1248), "Gemini-3.1-Pro-Preview": ("1 FPS", 1248),
    "Gemini-2.5-Flash": ("1 FPS", 1248), "Kimi-K2.5": ("1 FPS", 1248), "Qwen3.5-Plus": ("1 FPS", 1248),
    "Qwen3.6-Plus": ("1 FPS", 1248), "Qwen3.5-Flash": ("1 FPS", 1248),
    "Qwen3-VL-4B": ("1 FPS", None), "Qwen3-VL-8B": ("1 FPS", None), "MiniCPM-V 2.6": ("64", 64),
    "InternVL3.5-8B": ("64", 64), "LLaVA-Video-7B": ("1 FPS", 64), "LLaVA-Video-72B": ("1 FPS", 64),
    "AKS": ("128", 128), "ViLAMP": ("128", 128), "WFS-SB": ("128", 128), "VideoLLaMA3-7B": ("1 FPS", 128),
    "LongVA-7B-DPO": ("512", 512), "VideoChat-Flash-7B": ("1 FPS", 512), "Lingshu-7B": ("1 FPS", None),
    "Lingshu-32B": ("1 FPS", None), "Hulu-Med-7B": ("1 FPS", 1800), "HuatuoGPT-Vision-7B": ("1 FPS", None),
    "MedGRPO": ("1 FPS", None),
}


class _TagsIgnored(yaml.SafeLoader):
    pass


_TagsIgnored.add_multi_constructor("!", lambda loader, suffix, node: None)


def _task_kwargs(task: str) -> dict:
    """The task's lmms_eval_specific_kwargs default block, following ``include:``."""
    folder = task_path()
    doc = yaml.load((folder / f"{task}.yaml").read_text(), Loader=_TagsIgnored)
    while "lmms_eval_specific_kwargs" not in doc and "include" in doc:
        doc = yaml.load((folder / doc["include"]).read_text(), Loader=_TagsIgnored)
    return doc["lmms_eval_specific_kwargs"]["default"]


def test_every_paper_row_is_in_the_registry_with_its_input():
    assert {s.paper_row for s in M.SETTINGS} == set(PAPER)
    assert len({s.row for s in M.SETTINGS}) == len(M.SETTINGS)
    for s in M.SETTINGS:
        shown, cap = PAPER[s.paper_row]
        assert s.input_shown == shown, s.row
        if shown == "1 FPS":
            assert s.fps == 1 and s.frames is None, s.row
            if cap is not None:
                assert s.cap == cap, s.row
        else:
            assert s.frames == cap and s.cap is None, s.row


def test_official_caps_are_the_released_processors():
    for row in ("qwen3_vl_4b", "qwen3_vl_8b", "lingshu_7b", "lingshu_32b", "huatuogpt_vision_7b", "medgrpo"):
        assert M.setting(row).cap == 768
    from qwen_vl_utils import vision_process
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    assert M.QWEN_CAP == Qwen3VLVideoProcessor.max_frames == vision_process.FPS_MAX_FRAMES


@pytest.mark.parametrize("s", [s for s in M.SETTINGS if s.task], ids=lambda s: s.row)
def test_each_task_exists_with_the_rows_frame_setting(s):
    kwargs = _task_kwargs(s.task)
    assert kwargs["mode"] == "visual"
    if s.frames:
        assert kwargs["frames"] == s.frames
    else:
        assert (kwargs["fps"], kwargs["cap"]) == (s.fps, s.cap) and not kwargs.get("frames")


def test_rows_name_existing_adapters_or_say_why_not():
    for s in M.SETTINGS:
        if s.adapter:
            assert s.adapter in BRIDGES, s.row
            assert s.model_args and s.pixel_budget, s.row
        else:
            assert s.note and M.lmms_eval_command(s) is None, s.row
    selectors = [s.row for s in M.SETTINGS if s.selector]
    assert selectors == ["aks", "vilamp", "wfs_sb"]
    # run here as their selection (`select`, then the user's base model on the task that shows it)
    assert [M.setting(r).task for r in selectors] == ["medhorizon_aks128", "medhorizon_vilamp_select128",
                                                     "medhorizon_wfs128"]
    assert all(M.setting(r).runnable and M.selection_recipe(M.setting(r)) for r in selectors)


def test_command_line():
    assert M.lmms_eval_command(M.setting("qwen3_vl_8b")) == (
        "lmms-eval --model medhorizon_qwen3_vl --model_args pretrained=Qwen/Qwen3-VL-8B-Instruct "
        "--tasks medhorizon_cap768 --batch_size 1 --log_samples --output_path results/")
    assert "--tasks medhorizon " in M.lmms_eval_command(M.setting("llava_video_7b"))
    assert "--tasks medhorizon_frames64 " in M.lmms_eval_command(M.setting("internvl3_5_8b"))
    assert "--tasks medhorizon_cap1248 " in M.lmms_eval_command(M.setting("gemini_2_5_flash"))


def _protocol(argv, capsys):
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["protocol", *argv])
    status = args.func(args)
    return status, capsys.readouterr().out


def test_protocol_command(capsys):
    status, out = _protocol(["qwen3_vl_8b"], capsys)
    # the package's launcher, which exits non-zero when the evaluation failed, with lmms-eval's arguments
    assert status == 0 and out == "medhorizon-tasks run" + M.lmms_eval_command(M.setting("qwen3_vl_8b"))[
        len("lmms-eval"):] + "\n"
    # the names `score --paper-row` takes: the model as the paper prints it, its checkpoint
    for name in ("Qwen3-VL-8B", "Qwen/Qwen3-VL-8B-Instruct", "qwen3-vl-8b"):
        assert _protocol([name], capsys) == (status, out), name
    assert "sureon_visual,sureon_blind" in _protocol(["GPT-5.1 (high)"], capsys)[1]
    status, out = _protocol(["lingshu_7b", "--out", "runs/lingshu"], capsys)
    assert out.rstrip().endswith("--output_path runs/lingshu")
    status, out = _protocol(["--list"], capsys)
    assert status == 0 and len(out.splitlines()) == len(M.SETTINGS) + len(SUREON.SETTINGS) + len(SURGHI.SETTINGS)
    assert "qwen3_vl_8b" in out and "not runnable here" in out
    status, out = _protocol(["--markdown"], capsys)
    assert out == M.markdown_table() + "\n"
    with pytest.raises(MedHorizonError, match="unknown row"):
        _protocol(["gpt5"], capsys)
    with pytest.raises(MedHorizonError, match="no public weights"):
        _protocol(["sureon_vlm"], capsys)


def test_markdown_table_has_every_row():
    lines = M.markdown_table().splitlines()
    assert len(lines) == 2 + len(M.SETTINGS)
    assert all(line.count("|") == 9 for line in lines)
    assert "| Qwen3-VL-8B (Table 7) | 1 FPS, cap 768 | `medhorizon_qwen3_vl` |" in M.markdown_table()


def test_the_readme_table_is_the_registry():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    assert M.markdown_table() + "\n" in readme, "regenerate it: medhorizon-tasks protocol --markdown"


def test_registry_is_framework_free():
    source = Path(M.__file__).read_text()
    imported = {n.module or "" for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.startswith(("lmms_eval", "vlmeval", "torch", "transformers")) for m in imported)


def test_the_printed_command_gives_the_shell_exactly_its_values(capsys):
    """`protocol` through the real command: an output path with a space, a ';' or quotes stays one argument
    of lmms-eval (unquoted, a space broke the command and a ';' added one)."""
    import shlex

    from medhorizon_tasks.commands.main import main

    for path in ("my results/run 1", "results;touch pwned", "it's \"here\"/$HOME"):
        assert main(["protocol", "qwen3_vl_8b", "--out", path]) == 0
        argv = shlex.split(capsys.readouterr().out)
        assert argv == ["medhorizon-tasks", "run", "--model", "medhorizon_qwen3_vl", "--model_args",
                        "pretrained=Qwen/Qwen3-VL-8B-Instruct", "--tasks", "medhorizon_cap768", "--batch_size", "1",
                        "--log_samples", "--output_path", path]
    for s in M.SETTINGS:
        if s.runnable and s.adapter:  # selector rows print a recipe (test_selection_tasks)
            argv = shlex.split(M.lmms_eval_command(s, "out dir"))
            assert argv[argv.index("--model_args") + 1] == s.model_args and argv[-1] == "out dir", s.row


def _model_args(s) -> dict:
    return dict(part.split("=", 1) for part in s.model_args.split(","))


def test_a_thinking_models_row_gets_its_budget(capsys):
    """A model that thinks before it answers is run with room to answer: the Qwen3-VL Thinking row gets its model
    card's budget and the wrapper's thinking switch, the closed reasoning rows the reasoning budget and the effort
    the paper names; every other row keeps the tasks' 256 tokens (the template's, printed nowhere)."""
    thinking = SUREON.SETTINGS[2]
    assert thinking.paper_row == "Qwen3VL-32B-T" and thinking.max_new_tokens == M.QWEN3_VL_THINKING_BUDGET == 40_960
    status, out = _protocol(["sureon_qwen3_vl_32b_thinking"], capsys)
    assert status == 0 and out.split() == [
        "medhorizon-tasks", "run", "--model", "medhorizon_qwen3_vl", "--model_args",
        "pretrained=Qwen/Qwen3-VL-32B-Thinking,enable_thinking=true", "--tasks", "sureon_visual,sureon_blind",
        "--gen_kwargs", "max_new_tokens=40960", "--batch_size", "1", "--log_samples", "--output_path", "results/"]
    for s in (*M.SETTINGS, *SUREON.SETTINGS):
        if s.adapter == "medhorizon_openai":
            model = _model_args(s)["model"]
            assert rule_for(model).reasoning and s.max_new_tokens == M.REASONING_BUDGET == 25_000, s.row
            request_fields(model, s.max_new_tokens, 0, _model_args(s))  # the provider takes the row's args
            assert f"--gen_kwargs max_new_tokens={M.REASONING_BUDGET} " in M.lmms_eval_command(s)
        elif s is not thinking:
            assert s.max_new_tokens is None and "--gen_kwargs" not in (M.lmms_eval_command(s) or ""), s.row
    for task in ("medhorizon", "sureon_visual"):
        assert yaml.load((task_path() / f"_{task.split('_')[0]}_template_yaml").read_text(),
                         Loader=_TagsIgnored)["generation_kwargs"]["max_new_tokens"] == 256
    sureon_closed = {s.paper_row: _model_args(s) for s in SUREON.SETTINGS if s.adapter == "medhorizon_openai"}
    assert {k: v.get("reasoning_effort") for k, v in sureon_closed.items()} == {"GPT-5.1 (high)": "high",
                                                                            "Gemini 3.1 Pro": "high"}


def test_the_readme_has_sureons_rows():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    assert M.markdown_table(SUREON.SETTINGS) + "\n" in readme, "regenerate: medhorizon-tasks protocol --markdown " \
                                                                "--benchmark sureon"
