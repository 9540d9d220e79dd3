"""Every row of the three papers' model tables is in the registry, each runnable unless its weights are not public;
``protocol ROW --serve vllm`` prints the servers and a run whose model args the bridge takes."""

import argparse
import shlex
from pathlib import Path

import pytest

from medhorizon_tasks.adapters.lmms_eval.bridges.manifest import BRIDGES
from medhorizon_tasks.benchmarks.medhorizon import model_settings as M
from medhorizon_tasks.benchmarks.sureon import model_settings as SUREON
from medhorizon_tasks.benchmarks.surghi import model_settings as SURGHI
from medhorizon_tasks.commands.protocol import ROWS, add_parser
from medhorizon_tasks.core.errors import MedHorizonError
from medhorizon_tasks.runs.vllm_serve import ServePlan, serve_commands

# the model rows of Sureon's Table 3 and SurgHiBench's Tables 2-4, as the papers print them
SUREON_TABLE_3 = {"GPT-5.1 (high)", "Gemini 3.1 Pro", "Qwen3VL-32B-T", "Qwen3VL-8B-I", "Gemma 4", "Molmo2",
                  "MedGemma 1.5", "MedGRPO", "Sureon-VLM (Sureon-only)", "Sureon-VLM (Public-only)", "Sureon-VLM"}
SURGHI_TABLES = {"CLIP", "SurgCLIP*(β)", "HyperSurg"}
NO_PUBLIC_WEIGHTS = {"sureon_vlm", "sureon_vlm_sureon_only", "sureon_vlm_public_only", "surghi_hypersurg"}
SELECTORS = {"aks", "vilamp", "wfs_sb"}  # adaptive selectors: their rows are another change's


def _protocol(argv, capsys):
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["protocol", *argv])
    status = args.func(args)
    return status, capsys.readouterr().out


def test_every_row_of_the_three_papers_is_listed(capsys):
    assert {s.paper_row for s in SUREON.SETTINGS} == SUREON_TABLE_3
    assert {s.paper_row for s in SURGHI.SETTINGS} == SURGHI_TABLES
    status, out = _protocol(["--list"], capsys)
    listed = {line.split()[0] for line in out.splitlines()}
    assert status == 0 and listed == set(ROWS) and len(ROWS) == len(M.SETTINGS) + 11 + 3


def test_only_rows_without_public_weights_cannot_run():
    for s in ROWS.values():
        if s.row in NO_PUBLIC_WEIGHTS:
            assert not s.runnable and s.note.startswith("no public weights:"), s.row
        elif s.row not in SELECTORS:
            assert s.runnable, f"{s.row}: {s.note}"
            assert s.encoder or s.adapter in BRIDGES, s.row


def test_medgrpo_runs_the_public_checkpoint_and_says_its_cap_is_inferred():
    for s in (M.setting("medgrpo"), ROWS["sureon_medgrpo"]):
        assert s.adapter == "medhorizon_qwen2_5_vl" and s.model_args == f"pretrained={M.MEDGRPO}"
    assert M.setting("medgrpo").cap == 768 and "INFERRED" in M.setting("medgrpo").note


def test_encoder_rows_print_the_zeroshot_command(capsys):
    status, out = _protocol(["surghi_surgclip", "--out", "runs/surgclip"], capsys)
    assert status == 0 and shlex.split(out) == ["medhorizon-tasks", "surghi", "zeroshot", "--encoder", "surgclip",
                                                "--encoder-arg", "checkpoint=SURGCLIP_CHECKPOINT", "--out",
                                                "runs/surgclip"]
    _, out = _protocol(["surghi_clip"], capsys)
    assert "--encoder open_clip:ViT-B-16/openai" in out
    with pytest.raises(MedHorizonError, match="no public weights"):
        _protocol(["surghi_hypersurg"], capsys)


def test_the_docs_have_every_table():
    page = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    for table in (M.SETTINGS, SUREON.SETTINGS, SURGHI.SETTINGS):
        assert M.markdown_table(table) + "\n" in page, "regenerate: medhorizon-tasks protocol --markdown --benchmark"


def test_serve_one_node(capsys):
    status, out = _protocol(["qwen3_vl_8b", "--serve", "vllm", "--tensor-parallel", "2", "--data-parallel", "4"],
                            capsys)
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert status == 0 and len(lines) == 2
    server, client = (shlex.split(x) for x in lines)
    assert server[:3] == ["vllm", "serve", "Qwen/Qwen3-VL-8B-Instruct"]
    assert server[server.index("--tensor-parallel-size") + 1] == "2"
    assert server[server.index("--data-parallel-size") + 1] == "4" and "--headless" not in server
    assert server[server.index("--media-io-kwargs") + 1] == '{"video": {"num_frames": -1}}'
    assert client[:4] == ["medhorizon-tasks", "run", "--model", "medhorizon_openai"]
    assert client[client.index("--tasks") + 1] == "medhorizon_cap768"
    args = dict(a.split("=", 1) for a in client[client.index("--model_args") + 1].split(","))
    assert args == {"model": "Qwen/Qwen3-VL-8B-Instruct", "base_url": "http://localhost:8000/v1", "api_key": "EMPTY",
                    "frames_as": "video", "num_concurrent": "32", "pixel_factor": "32"}


def test_serve_several_nodes_with_headless_workers():
    commands = serve_commands(ROWS["sureon_gemma_4"], ServePlan(tensor_parallel=8, data_parallel=6, nodes=3,
                                                                head="10.0.0.1"))
    where = [w for w, _ in commands]
    assert where == ["node 0 (10.0.0.1, serves the API)", "node 1", "node 2", "client"]
    heads = [shlex.split(c) for _, c in commands[:3]]
    assert "--headless" not in heads[0] and all("--headless" in h for h in heads[1:])
    assert [h[h.index("--data-parallel-start-rank") + 1] for h in heads[1:]] == ["2", "4"]
    assert all(h[h.index("--data-parallel-size-local") + 1] == "2" for h in heads)
    assert all(h[h.index("--data-parallel-address") + 1] == "10.0.0.1" for h in heads)
    client = shlex.split(commands[-1][1])
    assert "base_url=http://10.0.0.1:8000/v1" in client[client.index("--model_args") + 1]
    assert client[client.index("--tasks") + 1] == "sureon_visual,sureon_blind"


def test_the_printed_run_is_one_the_bridge_takes():
    """Every servable row's client command: model args the bridge accepts (an unknown one would stop the run)."""
    from medhorizon_tasks.adapters.lmms_eval.bridges.openai import OpenAICompatible

    served = 0
    for s in ROWS.values():
        try:
            commands = serve_commands(s, ServePlan())
        except MedHorizonError:
            continue
        served += 1
        client = shlex.split(commands[-1][1])
        args = dict(a.split("=", 1) for a in client[client.index("--model_args") + 1].split(","))
        bridge = OpenAICompatible(**args)
        assert bridge.frames_as == "video" and bridge.video is not None, s.row
    assert served >= 8


@pytest.mark.parametrize("row, match", [("gpt_5_4", "no vLLM video path"), ("sureon_vlm", "no public weights"),
                                        ("sureon_qwen3_vl_32b_thinking", "enable_thinking"),
                                        ("surghi_clip", "no vLLM video path")])
def test_rows_vllm_cannot_serve_say_why(row, match):
    with pytest.raises(MedHorizonError, match=match):
        serve_commands(ROWS[row], ServePlan())


def test_bad_plans_are_refused():
    with pytest.raises(MedHorizonError, match="multiple of --nodes"):
        ServePlan(data_parallel=3, nodes=2)
    with pytest.raises(MedHorizonError, match="tensor-parallel"):
        ServePlan(tensor_parallel=0)
