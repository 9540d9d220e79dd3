"""Sureon through the real lmms-eval CLI on the synthetic sample; score, compare and blind-audit read the outputs."""

import json
import re

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

pytestmark = pytest.mark.e2e

TASKS = ["sureon_synthetic_visual", "sureon_synthetic_blind", "sureon_synthetic_visual_noblur"]


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("sureon")
    sample = build_sureon_sample()
    needle = run_lmms_eval("medhorizon_needle", TASKS, out / "needle")
    guessers = [run_lmms_eval("medhorizon_random", ["sureon_synthetic_blind"], out / f"random{s}",
                              model_args=f"seed={s}") for s in range(5)]
    return sample, needle, guessers


def test_visual_and_blind_results(runs, capsys):
    sample, needle, _ = runs
    assert needle.accuracy("sureon_synthetic_visual") == 1.0, "the blurring pass keeps the scene's codes"
    assert needle.accuracy("sureon_synthetic_visual_noblur") == 1.0
    assert needle.accuracy("sureon_synthetic_blind") == 0.0
    v, b = needle.samples["sureon_synthetic_visual"], needle.samples["sureon_synthetic_blind"]
    assert main(["score", "--benchmark", "sureon", "--data", str(sample.data_path), "--predictions", str(v),
                 "--blind", str(b), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["mu"]["accuracy"] == 1.0 and rep["mu"]["n"] == 27
    assert rep["by_category"]["TO"]["accuracy"] == 1.0
    assert rep["mg"]["overall"] == 1.0
    assert rep["sm"]["n"] == 2 and rep["sm"]["not_judged"] == 2
    prompts = [json.loads(x)["input"] for x in v.read_text().splitlines()]
    # a "simple" model gets the interleaved prompt's text parts as one text (Fig. 17: one timestamp per frame)
    assert all(sum(bool(re.fullmatch(r"Frame \d+ at \d+\.\d s:", x)) for x in p.splitlines()) == 8 for p in prompts)
    blind_prompts = [json.loads(x)["input"] for x in b.read_text().splitlines()]
    assert all(bp == "\n".join(x for x in vp.splitlines() if not re.fullmatch(r"Frame \d+ at \d+\.\d s:", x))
               for vp, bp in zip(prompts, blind_prompts)), "blind = the identical text without the frames"


def test_a_run_without_the_blurring_pass_says_so_in_its_records_and_report(runs, capsys):
    """The *_noblur task's per-item records carry the departure, through the real lmms-eval CLI; `score`
    titles its report with it and never sets the synthetic sample beside the paper's rows."""
    sample, needle, _ = runs
    noblur = needle.samples["sureon_synthetic_visual_noblur"]
    records = [json.loads(x)["accuracy"] for x in noblur.read_text().splitlines()]
    assert records and all(r["departures"] == ["no blur"] for r in records)
    blurred = needle.samples["sureon_synthetic_visual"]
    assert not any("departures" in json.loads(x)["accuracy"] for x in blurred.read_text().splitlines())
    assert main(["score", "--benchmark", "sureon", "--data", str(sample.data_path), "--predictions", str(noblur),
                 "--paper-row", "Qwen3-VL-8B-Instruct", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["departures"] == ["no blur"] and rep["paper"] == []
    assert rep["paper_refused"][0]["refused"][0].startswith("the data are not the paper's benchmark: 29 questions")


def test_compare_and_blind_audit_read_the_samples(runs, capsys):
    sample, needle, guessers = runs
    assert main(["compare", "--benchmark", "sureon", "--data", str(sample.data_path), "--json",
                 str(needle.samples["sureon_synthetic_visual"]), str(needle.samples["sureon_synthetic_blind"])]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["pairs"]
    assert pair["only_a"] == 27 and pair["significant"]
    files = [str(g.samples["sureon_synthetic_blind"]) for g in guessers]
    assert main(["blind-audit", *files, "--data", str(sample.data_path), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_runs"] == 5 and res["n_items"] == 29
    # the random probe answers the ordering items with an order of their events (a letter would be invalid)
    assert main(["score", "--benchmark", "sureon", "--data", str(sample.data_path), "--predictions", files[0],
                 "--mode", "blind", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["by_category"]["TO"]["n"] == 3 and rep["by_category"]["TO"]["invalid"] == 0
    # a seeded uniform guesser over 7 options recovers an item in >= 3 of 5 runs only by rare chance
    assert res["n_flagged"] <= 3
