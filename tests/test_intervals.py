"""Intervals wherever numbers are compared (issue 39, item 6): Sureon's MG = S_v - S_wv with a paired
bootstrap interval and McNemar's p in `score`, `compare` and the leaderboard; per-task and per-family
intervals in `score`'s MedHorizon reports."""

import json
import subprocess
import sys

import numpy as np
import pytest

from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core import stats as S

OPTS = ["Grasper", "Hook", "Clipper", "Scissors", "Irrigator", "Bipolar", "Stapler"]
LETTERS = "ABCDEFG"
N = 40


def _items_and_runs(tmp_path):
    """40 Sureon MCQ items (two categories); a visual run right on 30, a blind run right on 12 (8 of them
    also right visually): MG = 18/40 = +45 points, discordant 22 vs 4."""
    rng = np.random.default_rng(7)
    items, visual, blind = [], [], []
    v_right = set(range(30))
    b_right = set(range(22, 34))
    for i in range(N):
        answer = LETTERS[int(rng.integers(0, 7))]
        wrong = LETTERS[(LETTERS.index(answer) + 1) % 7]
        items.append({"uid": f"q{i:02d}", "category": "AD" if i % 2 else "LAR", "question": "Which tool?",
                      "video_path": "v/1.mp4", "start_s": 0, "end_s": 30, "options": OPTS, "answer": answer})
        visual.append({"uid": f"q{i:02d}", "prediction": answer if i in v_right else wrong})
        blind.append({"uid": f"q{i:02d}", "prediction": answer if i in b_right else wrong})
    paths = {}
    for name, rows in (("items", items), ("visual", visual), ("blind", blind)):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    v = {f"q{i:02d}": i in v_right for i in range(N)}
    b = {f"q{i:02d}": i in b_right for i in range(N)}
    return paths, v, b


def _reference_paired_bootstrap(v: dict, b: dict, n_resamples: int, seed: int) -> list[float]:
    """The paired percentile bootstrap written out: resample items, difference of the two accuracies on them."""
    uids = sorted(v)
    a = np.array([v[u] for u in uids], dtype=float)
    c = np.array([b[u] for u in uids], dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(uids), (n_resamples, len(uids)))
    diffs = a[idx].mean(axis=1) - c[idx].mean(axis=1)
    return list(np.percentile(diffs, [2.5, 97.5]))


def _statsmodels_mcnemar(v: dict, b: dict) -> float:
    from statsmodels.stats.contingency_tables import mcnemar

    t = [[sum(v[u] and b[u] for u in v), sum(v[u] and not b[u] for u in v)],
         [sum(b[u] and not v[u] for u in v), sum(not v[u] and not b[u] for u in v)]]
    return mcnemar(t, exact=t[0][1] + t[1][0] < 25, correction=True).pvalue


def test_paired_difference_against_a_reference_computation(tmp_path):
    _, v, b = _items_and_runs(tmp_path)
    d = S.paired_difference(v, b, n_resamples=3000, seed=4)
    assert d["difference"] == pytest.approx(0.45)
    assert d["ci95_bootstrap"] == pytest.approx(_reference_paired_bootstrap(v, b, 3000, 4))
    assert d["pvalue"] == pytest.approx(_statsmodels_mcnemar(v, b), rel=1e-12)
    assert d["ci95_bootstrap"][0] > 0 and d["pvalue"] < 0.001
    # no discordant item: the difference is 0 with the interval [0, 0] and p = 1
    same = S.paired_difference(v, v)
    assert same["difference"] == 0 and same["ci95_bootstrap"] == [0.0, 0.0] and same["pvalue"] == 1.0
    with pytest.raises(ValueError, match="only in visual"):
        S.paired_difference(v, {u: x for u, x in b.items() if u != "q00"}, names=("visual", "blind"))


def test_score_sureon_reports_mg_with_its_interval_and_p(tmp_path, capsys):
    paths, v, b = _items_and_runs(tmp_path)
    args = ["score", "--benchmark", "sureon", "--data", str(paths["items"]), "--predictions", str(paths["visual"]),
            "--blind", str(paths["blind"])]
    assert main([*args, "--json"]) == 0
    mg = json.loads(capsys.readouterr().out)["mg"]
    assert mg["overall"] == pytest.approx(0.45) and mg["n"] == N
    assert mg["ci95_bootstrap"] == pytest.approx(_reference_paired_bootstrap(v, b, 10_000, 0))
    assert mg["pvalue"] == pytest.approx(_statsmodels_mcnemar(v, b), rel=1e-12)
    for cat in ("AD", "LAR"):
        sub = [u for u in v if (int(u[1:]) % 2 == 1) == (cat == "AD")]
        ref = _reference_paired_bootstrap({u: v[u] for u in sub}, {u: b[u] for u in sub}, 10_000, 0)
        assert mg["by_category_ci95"][cat] == pytest.approx(ref)
    # the table shows them: through the installed command, as a user runs it
    out = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", *args], capture_output=True, text=True, check=True).stdout
    lo, hi = mg["ci95_bootstrap"]
    assert f"+45.0 [{100 * lo:+.1f}, {100 * hi:+.1f}]" in out
    assert "MG [paired 95% CI]" in out and "McNemar p" in out and "<0.001" in out


def test_compare_gives_each_difference_its_interval_and_names_mg(tmp_path, capsys):
    paths, v, b = _items_and_runs(tmp_path)
    blind = tmp_path / "blind_mode.jsonl"  # the run says it was blind, as a samples file of sureon_blind does
    blind.write_text("".join(json.dumps({**json.loads(line), "mode": "blind"}) + "\n"
                             for line in paths["blind"].read_text().splitlines()))
    args = ["compare", str(paths["visual"]), str(blind), "--benchmark", "sureon", "--data", str(paths["items"]),
            "--labels", "M visual,M blind"]
    assert main([*args, "--json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["pairs"]
    assert pair["delta_ci95_bootstrap"] == pytest.approx(_reference_paired_bootstrap(v, b, 10_000, 0))
    assert pair["mg"]["visual"] == "M visual" and pair["mg"]["difference"] == pytest.approx(0.45)
    assert main(args) == 0
    out = capsys.readouterr().out
    lo, hi = pair["delta_ci95_bootstrap"]
    assert f"M visual - M blind: +45.0 [{100 * lo:+.1f}, {100 * hi:+.1f}], McNemar p<0.001" in out
    assert "MG = S_v - S_wv (visual run M visual, blind run M blind, same items)" in out


def test_leaderboard_sets_mg_with_interval_beside_the_visual_entry(tmp_path):
    from medhorizon_tasks.benchmarks.data import load_benchmark_data
    from medhorizon_tasks.leaderboard import build_leaderboard, make_submission
    from medhorizon_tasks.leaderboard.tables import format_csv, table_rows

    paths, v, b = _items_and_runs(tmp_path)
    data = load_benchmark_data("sureon", str(paths["items"]))
    subs = [make_submission(data, paths["visual"], model="M", size="7B", mode="visual"),
            make_submission(data, paths["blind"], model="M", size="7B", mode="blind")]
    (board,) = build_leaderboard(subs, {"sureon": data}, n_resamples=500)
    head, rows = table_rows(board)
    col = head.index("MG vs blind [95% CI]")
    visual = next(e for e in board.entries if e.metadata["mode"] == "visual")
    ref = _reference_paired_bootstrap(v, b, 500, 0)
    assert [visual.secondary["mg_ci95_low"], visual.secondary["mg_ci95_high"]] == pytest.approx(ref)
    assert visual.secondary["mg_pvalue"] == pytest.approx(_statsmodels_mcnemar(v, b), rel=1e-12)
    text = {e.metadata["mode"]: r[col] for e, r in zip(board.entries, rows)}
    assert text["blind"] == "—"
    assert text["visual"].startswith(f"+45.0 [{100 * ref[0]:+.1f}, {100 * ref[1]:+.1f}] p<0.001")
    assert any("MG = S_v - S_wv" in n for n in board.notes)
    assert "mg_ci95_low" in format_csv([board]).splitlines()[0]


def test_score_prints_each_task_and_family_with_its_interval(synthetic, tmp_path):
    from statsmodels.stats.proportion import proportion_confint

    from medhorizon_tasks.benchmarks.medhorizon.release import load_release

    items = load_release(synthetic.data_path)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"uid": it.uid, "prediction": it.answer if i % 3 else "A"}) + "\n"
                             for i, it in enumerate(items)))
    exe = [sys.executable, "-m", "medhorizon_tasks.commands.main", "score", "--benchmark", "medhorizon", "--synthetic", "--predictions", str(preds)]
    out = subprocess.run(exe, capture_output=True, text=True, check=True).stdout
    rep = json.loads(subprocess.run([*exe, "--json"], capture_output=True, text=True, check=True).stdout)
    assert "accuracy % [Wilson 95% CI] by family and task:" in out
    for key, group in [*rep["by_family"].items(), *rep["by_task"].items()]:
        lo, hi = proportion_confint(group["correct"], group["n"], method="wilson")
        assert group["ci95"] == pytest.approx([lo, hi]) and group["ci_method"] == "wilson"
        assert f"{100 * group['accuracy']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] (n {group['n']})" in out, key
    assert "PR   Phase Recognition" in out, "the task codes are spelled out"


def test_a_leaderboard_entry_at_100_or_0_percent_gets_its_wilson_interval_beside_the_bootstrap(tmp_path):
    """Issue 38 item 12: a percentile bootstrap of 100% is [100.0, 100.0]; the Wilson interval is not."""
    from statsmodels.stats.proportion import proportion_confint

    from medhorizon_tasks.benchmarks.data import load_benchmark_data
    from medhorizon_tasks.leaderboard import build_leaderboard, make_submission
    from medhorizon_tasks.leaderboard.tables import board_footnote, table_rows

    paths, _, _ = _items_and_runs(tmp_path)
    items = [json.loads(line) for line in paths["items"].read_text().splitlines()]
    right, wrong, some = (tmp_path / f"{n}.jsonl" for n in ("right", "wrong", "some"))
    right.write_text("".join(json.dumps({"uid": it["uid"], "prediction": it["answer"]}) + "\n" for it in items))
    wrong.write_text("".join(json.dumps({"uid": it["uid"], "prediction": "I cannot tell"}) + "\n" for it in items))
    data = load_benchmark_data("sureon", str(paths["items"]))
    subs = [make_submission(data, p, model=p.stem, size="7B") for p in (right, wrong, paths["visual"])]
    (board,) = build_leaderboard(subs, {"sureon": data}, n_resamples=300)
    head, rows = table_rows(board)
    cell = {r[1]: r[head.index("μ (MCQ + TO) % [95% CI]")] for r in rows}
    lo, hi = proportion_confint(N, N, method="wilson")
    assert cell["right"] == f"100.0 [100.0, 100.0], Wilson [{100 * lo:.1f}, {100 * hi:.1f}]"
    lo, hi = proportion_confint(0, N, method="wilson")
    assert cell["wrong"] == f"0.0 [0.0, 0.0], Wilson [{100 * lo:.1f}, {100 * hi:.1f}]"
    assert "Wilson" not in cell["visual"], "an interval that is not one point stands alone"
    assert "every resample is the same" in board_footnote(board)
