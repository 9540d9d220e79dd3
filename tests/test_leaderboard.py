"""Leaderboard: data version, submissions (make / validate) and the built tables with their statistics."""

import copy
import csv
import io
import json
import math
import re

import numpy as np
import pytest

from medhorizon_tasks.benchmarks import data as D
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.leaderboard import build as B
from medhorizon_tasks.leaderboard import submission as S
from medhorizon_tasks.leaderboard import tables as T

NR = 300  # bootstrap resamples in tests

# ------------------------------------------------------------------ fixtures: three small benchmarks

TASKS = ["PR", "SD", "RL", "BPQ", "LLS", "Site", "Hist", "Size", "IR", "WR", "RSR", "CPR", "LA"]


def release_records():
    """52 MedHorizon items over 4 videos (13 tasks each), answers cycling A..D."""
    recs, uid = [], 0
    for v in range(4):
        qa = []
        for t in TASKS:
            qa.append({"uid": uid, "question": f"Question {uid}?", "options": [f"opt{uid}-{k}" for k in range(4)],
                       "answer": "ABCD"[uid % 4], "task_id": t})
            uid += 1
        recs.append({"key": f"v{v}", "dataset": ["GraSP", "REAL-Colon"][v % 2], "video_path": f"v{v}.mp4",
                     "num_frames": 1000, "fps": 25.0, "duration_seconds": 40.0, "qa": qa})
    return recs


SUREON_CATS = ["AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F"]
EVENTS = ["Dissection", "Clipping", "Cutting"]


def sureon_records():
    """40 MCQ items (5 per category), 4 TO items and 2 SM items."""
    rows = []
    for k in range(40):
        rows.append({"uid": f"q{k}", "category": SUREON_CATS[k % 8], "question": f"What happens in q{k}?",
                     "video_path": f"clips/q{k}.mp4", "start_s": 0, "end_s": 10,
                     "options": [f"q{k} option {j}" for j in range(7)], "answer": "ABCDEFG"[k % 7]})
    for k in range(4):
        rows.append({"uid": f"t{k}", "category": "TO", "question": "Order these.", "video_path": f"clips/t{k}.mp4",
                     "start_s": 0, "end_s": 60, "events": EVENTS, "answer": [EVENTS[(k + j) % 3] for j in range(3)]})
    for k in range(2):
        rows.append({"uid": f"m{k}", "category": "SM", "question": "Summarise.", "video_path": f"clips/m{k}.mp4",
                     "start_s": 0, "end_s": 60, "reference": "Dissect, clip, cut."})
    return rows


# Dataset toyA has a tree hierarchy, toyB a DAG (step "s2" belongs to both phases).
HIERARCHY = {
    "toyA": {"phases": {"Prep": ["Incision", "Exposure"], "Repair": ["Suture", "Clip"]},
             "semantic_groups": {"closing": ["Suture", "Clip"]}},
    "toyB": {"phases": {"P1": ["s1", "s2"], "P2": ["s2", "s3"]}},
}
_LABELS = {"toyA": [("Prep", "Incision"), ("Prep", "Exposure"), ("Repair", "Suture"), ("Repair", "Clip")],
           "toyB": [("P1", "s1"), ("P1", "s2"), ("P2", "s2"), ("P2", "s3")]}


def surghi_rows():
    """2 datasets x 4 videos x 8 frames."""
    rows = []
    for ds, labels in _LABELS.items():
        for v in range(4):
            for f in range(8):
                phase, step = labels[(f // 2 + v) % 4]
                rows.append({"dataset": ds, "video": f"vid{v}", "frame": f * 25, "phase": phase, "step": step})
    return rows


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def files(tmp_path):
    hier = tmp_path / "hierarchy.json"
    hier.write_text(json.dumps(HIERARCHY))
    return {"medhorizon": write_jsonl(tmp_path / "release.jsonl", release_records()),
            "sureon": write_jsonl(tmp_path / "sureon.jsonl", sureon_records()),
            "surghi": write_jsonl(tmp_path / "surghi.jsonl", surghi_rows()),
            "hierarchy": hier}


@pytest.fixture()
def data(files):
    return {"medhorizon": D.load_benchmark_data("medhorizon", files["medhorizon"]),
            "sureon": D.load_benchmark_data("sureon", files["sureon"]),
            "surghi": D.load_benchmark_data("surghi", files["surghi"], hierarchy=files["hierarchy"])}


def run_cli(capsys, *args):
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# ------------------------------------------------------------------ submissions built in tests

def meta(bench, version, model, **kw):
    m = {"model": model, "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
         "date": "2025-06-30", "benchmark": bench, "data_version": version}
    m.update(kw)
    return m


def wrong_letter(letter, n=4):
    return "ABCDEFG"[("ABCDEFG".index(letter) + 1) % n]


def mcq_submission(d, model, right, **kw):
    """A MedHorizon / Sureon submission answering item i right when ``right(i)``, else a wrong letter."""
    preds = []
    for i, it in enumerate(d.items):
        kind = getattr(it, "kind", "mcq")  # MedHorizon items are all MCQ
        if kind == "to":
            order = list(it.answer) if right(i) else list(reversed(it.answer))
            preds.append({"id": it.uid, "output": "Answer: " + " > ".join(order)})
        elif kind == "sm":
            preds.append({"id": it.uid, "output": "A summary."})
        else:
            n = 7 if d.benchmark == "sureon" else 4
            letter = it.answer if right(i) else wrong_letter(it.answer, n)
            preds.append({"id": it.uid, "output": f"The answer is {letter}."})
    return {"format": S.FORMAT, "format_version": 1, "metadata": meta(d.benchmark, d.version, model, **kw),
            "predictions": preds}


def surghi_submission(d, model, label):
    """``label(i, row) -> (phase, step)`` for the i-th annotated row."""
    preds = []
    for i, r in enumerate(d.rows):
        phase, step = label(i, r)
        preds.append({"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": phase, "step": step})
    return {"format": S.FORMAT, "format_version": 1, "metadata": meta("surghi", d.version, model),
            "predictions": preds}


def random_ish(seed, p=0.25):
    rng = np.random.default_rng(seed)
    draws = rng.random(1000)
    return lambda i: bool(draws[i] < p)


# ------------------------------------------------------------------ data version

def test_version_is_stable_under_reordering_and_reformatting(tmp_path, files, data):
    recs = release_records()
    # Reverse the videos and their questions, reorder keys, change spacing: same content.
    shuffled = [dict(reversed(list({**r, "qa": list(reversed(r["qa"]))}.items()))) for r in reversed(recs)]
    p = tmp_path / "release2.jsonl"
    p.write_text("".join(json.dumps(r, indent=None, separators=(" ,", " :  ")) + "\n\n" for r in shuffled))
    assert D.data_version("medhorizon", p) == data["medhorizon"].version

    p = write_jsonl(tmp_path / "sureon2.jsonl", list(reversed(sureon_records())))
    assert D.data_version("sureon", p) == data["sureon"].version

    # SurgHiBench: reordered rows, as CSV, labels in another case, with task-item extras.
    rows = list(reversed(surghi_rows()))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["dataset", "video", "frame", "phase", "step", "timestamp_s", "video_path"])
    w.writeheader()
    for r in rows:
        w.writerow({**r, "phase": r["phase"].upper(), "timestamp_s": r["frame"] / 25, "video_path": "x.mp4"})
    p = tmp_path / "surghi2.csv"
    p.write_text(buf.getvalue())
    hier2 = tmp_path / "hier2.json"  # the same hierarchy, datasets and steps in another order
    hier2.write_text(json.dumps({"toyB": {"phases": {"P2": ["s3", "s2"], "P1": ["s2", "s1"]}},
                                 "toyA": {"phases": {"Repair": ["Clip", "Suture"], "Prep": ["Exposure", "Incision"]},
                                          "semantic_groups": {"closing": ["Clip", "Suture"]}}}, indent=4))
    assert D.data_version("surghi", p, hierarchy=hier2) == data["surghi"].version

    for d in data.values():
        assert d.version.startswith("sha256:") and len(d.version) == len("sha256:") + 16
    assert len({d.version for d in data.values()}) == 3


def test_version_changes_with_any_answer_or_label_edit(tmp_path, files, data):
    recs = release_records()
    recs[2]["qa"][5]["answer"] = wrong_letter(recs[2]["qa"][5]["answer"])
    assert D.data_version("medhorizon", write_jsonl(tmp_path / "r.jsonl", recs)) != data["medhorizon"].version
    recs = release_records()
    recs[0]["qa"][0]["question"] = "Question zero?"  # a question is data too (surrounding spaces are not)
    assert D.data_version("medhorizon", write_jsonl(tmp_path / "r.jsonl", recs)) != data["medhorizon"].version

    rows = sureon_records()
    rows[41]["answer"] = list(reversed(rows[41]["answer"]))  # a TO answer
    assert D.data_version("sureon", write_jsonl(tmp_path / "s.jsonl", rows)) != data["sureon"].version

    rows = surghi_rows()
    rows[3]["step"] = "Exposure" if rows[3]["step"] != "Exposure" else "Incision"
    assert D.data_version("surghi", write_jsonl(tmp_path / "g.jsonl", rows),
                          hierarchy=files["hierarchy"]) != data["surghi"].version
    # The same annotations under another hierarchy are another version.
    hier = copy.deepcopy(HIERARCHY)
    hier["toyA"]["semantic_groups"] = {}
    (tmp_path / "h.json").write_text(json.dumps(hier))
    assert D.data_version("surghi", files["surghi"], hierarchy=tmp_path / "h.json") != data["surghi"].version


def test_version_command(files, data, capsys):
    rc, out, _ = run_cli(capsys, "leaderboard", "version", "--benchmark", "surghi", "--data", files["surghi"],
                         "--hierarchy", files["hierarchy"])
    assert rc == 0 and out.strip() == data["surghi"].version
    rc, out, _ = run_cli(capsys, "leaderboard", "version", "--benchmark", "medhorizon", "--data", files["medhorizon"])
    assert rc == 0 and out.strip() == data["medhorizon"].version
    rc, _, err = run_cli(capsys, "leaderboard", "version", "--benchmark", "sureon")
    assert rc == 2 and "no data given for sureon" in err


# ------------------------------------------------------------------ make

def test_make_from_plain_predictions_and_lmms_samples(tmp_path, files, data, capsys):
    d = data["medhorizon"]
    plain = write_jsonl(tmp_path / "preds.jsonl", [{"uid": int(it.uid), "prediction": f"({it.answer})"}
                                                   for it in d.items])
    out = tmp_path / "sub.json"
    rc, _, err = run_cli(capsys, "leaderboard", "make", "--benchmark", "medhorizon", "--data", files["medhorizon"],
                         "--predictions", plain, "--model", "Needle <7B>", "--model-size", "7B", "--fps", "1",
                         "--cap", "64", "--date", "2025-01-31", "--out", out)
    assert rc == 0, err
    sub = json.loads(out.read_text())
    assert sub["format"] == "medhorizon-tasks-submission" and sub["format_version"] == 1
    assert sub["metadata"] == {"model": "Needle <7B>", "size": "7B",
                               "input_protocol": {"fps": 1.0, "cap": 64, "frames": None}, "date": "2025-01-31",
                               "benchmark": "medhorizon", "data_version": d.version}
    assert [p["id"] for p in sub["predictions"]] == [it.uid for it in d.items]
    assert sub["predictions"][1] == {"id": "1", "output": "(B)"}
    rc, out_text, _ = run_cli(capsys, "leaderboard", "validate", out, "--data", files["medhorizon"])
    assert rc == 0 and out_text.startswith(f"OK {out}: medhorizon, model Needle <7B>, 52 predictions")

    # lmms-eval --log_samples lines: the raw response is kept, the mode and a video error come along.
    samples = [{"doc_id": i, "target": it.answer, "filtered_resps": [f"I think {it.answer}"],
                "accuracy": {"uid": it.uid, "mode": "text", **({"error": "video missing"} if i == 3 else {})}}
               for i, it in enumerate(d.items)]
    sub = S.make_submission(d, write_jsonl(tmp_path / "samples.jsonl", samples), model="m", size="unknown",
                            frames=0)
    assert sub["metadata"]["mode"] == "text" and sub["metadata"]["input_protocol"]["frames"] == 0
    assert sub["predictions"][0] == {"id": "0", "output": "I think A"}
    assert sub["predictions"][3]["error"] == "video missing"
    boards = B.build_leaderboard([sub], {"medhorizon": d}, n_resamples=NR)
    assert boards[0].entries[0].headline == pytest.approx(51 / 52)  # the video error is scored wrong


def test_make_sureon_and_surghi(tmp_path, files, data, capsys):
    d = data["sureon"]
    rows = [{"uid": it.uid, "prediction": it.answer if it.kind == "mcq" else
             (" > ".join(it.answer) if it.kind == "to" else "summary")} for it in d.items]
    sub = S.make_submission(d, write_jsonl(tmp_path / "s.jsonl", rows), model="m", size="1B", frames=8)
    assert sub["metadata"]["mode"] == "visual" and len(sub["predictions"]) == 46

    # SurgHiBench from frame rows (CSV), labels as the model wrote them.
    g = data["surghi"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["dataset", "video", "frame", "phase", "step"])
    w.writeheader()
    for r in g.rows:
        w.writerow({"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": r.phase.lower(),
                    "step": r.step})
    (tmp_path / "g.csv").write_text(buf.getvalue())
    out = tmp_path / "g.json"
    rc, _, err = run_cli(capsys, "leaderboard", "make", "--benchmark", "surghi", "--data", files["surghi"],
                         "--hierarchy", files["hierarchy"], "--predictions", tmp_path / "g.csv", "--model", "clip",
                         "--model-size", "0.4B", "--frames", "16", "--out", out)
    assert rc == 0, err
    sub = json.loads(out.read_text())
    assert sub["predictions"][0] == {"dataset": "toyA", "video": "vid0", "frame": 0, "phase": "prep",
                                     "step": "Incision"}
    boards = B.build_leaderboard([out], {"surghi": g}, n_resamples=20)
    assert boards[0].entries[0].headline == 1.0


def test_make_refuses_missing_items_unless_asked(tmp_path, files, data, capsys):
    d = data["medhorizon"]
    plain = write_jsonl(tmp_path / "preds.jsonl", [{"uid": it.uid, "prediction": it.answer} for it in d.items[:50]])
    args = ["leaderboard", "make", "--benchmark", "medhorizon", "--data", files["medhorizon"], "--predictions", plain,
            "--model", "m", "--model-size", "7B", "--out", tmp_path / "sub.json"]
    rc, _, err = run_cli(capsys, *args)
    assert rc == 2 and "missing id(s): 2 of the 52 items of the data have no prediction: 50, 51" in err
    assert not (tmp_path / "sub.json").exists()
    rc, _, err = run_cli(capsys, *args, "--missing-as-wrong")
    assert rc == 0, err
    sub = json.loads((tmp_path / "sub.json").read_text())
    assert sub["predictions"][-1] == {"id": "51", "output": None}
    entry = B.build_leaderboard([tmp_path / "sub.json"], data, n_resamples=NR)[0].entries[0]
    assert entry.headline == pytest.approx(50 / 52) and entry.secondary["invalid"] == 2


# ------------------------------------------------------------------ validate

def _good(data):
    return mcq_submission(data["medhorizon"], "good", lambda i: True)


def _mutate(fn):
    def apply(sub):
        sub = copy.deepcopy(sub)
        fn(sub)
        return sub
    return apply


MALFORMED = [
    ("duplicate id", _mutate(lambda s: s["predictions"].append(dict(s["predictions"][7]))),
     "duplicate id(s), each must be predicted once: 7 (2 times)"),
    ("missing ids", _mutate(lambda s: s.__setitem__("predictions", s["predictions"][:45])),
     "missing id(s): 7 of the 52 items of the data have no prediction: 45, 46, 47, 48, 49, ... (7 in all)"),
    ("extra id", _mutate(lambda s: s["predictions"].append({"id": "999", "output": "A"})),
     "extra id(s): 1 id(s) are not items of the data: 999"),
    ("wrong data_version", _mutate(lambda s: s["metadata"].__setitem__("data_version", "sha256:0123456789abcdef")),
     "data_version mismatch: expected {version} (the data given"),
    ("missing metadata field", _mutate(lambda s: s["metadata"].pop("model")), "metadata.model: missing"),
    ("bad date", _mutate(lambda s: s["metadata"].__setitem__("date", "2025-02-30")),
     "metadata.date: '2025-02-30' is not a date (expected YYYY-MM-DD"),
    ("date not ISO", _mutate(lambda s: s["metadata"].__setitem__("date", "30/06/2025")),
     "metadata.date: '30/06/2025' is not a date"),
    ("unknown benchmark", _mutate(lambda s: s["metadata"].__setitem__("benchmark", "videomme")),
     "metadata.benchmark: unknown benchmark 'videomme' (expected one of medhorizon, sureon, surghi)"),
    ("bad protocol", _mutate(lambda s: s["metadata"]["input_protocol"].__setitem__("cap", 0)),
     "metadata.input_protocol.cap: expected an integer >= 1 or null, got 0"),
    ("protocol key missing", _mutate(lambda s: s["metadata"]["input_protocol"].pop("frames")),
     "metadata.input_protocol.frames: missing"),
    ("output not text", _mutate(lambda s: s["predictions"][2].__setitem__("output", 3)),
     "predictions[2] (id 2): output: expected text or null, got int"),
    ("wrong format", _mutate(lambda s: s.__setitem__("format", "lmms-eval")),
     "format: expected 'medhorizon-tasks-submission'"),
    ("future format", _mutate(lambda s: s.__setitem__("format_version", 2)),
     "reads format_version 1, got 2"),
    ("unknown metadata field", _mutate(lambda s: s["metadata"].__setitem__("params", "7B")),
     "metadata.params: unknown field"),
]


@pytest.mark.parametrize("case,mutate,expected", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_validate_rejects_each_malformed_submission_with_its_reason(tmp_path, files, data, capsys, case, mutate,
                                                                    expected):
    good = tmp_path / "good.json"
    S.write_submission(_good(data), good)
    rc, out, err = run_cli(capsys, "leaderboard", "validate", good, "--data", files["medhorizon"])
    assert rc == 0 and out.startswith("OK ") and not err

    bad = tmp_path / "bad.json"
    S.write_submission(mutate(_good(data)), bad)
    rc, out, err = run_cli(capsys, "leaderboard", "validate", bad, "--data", files["medhorizon"])
    assert rc == 1 and not out
    assert err.startswith(f"{bad}: INVALID, ")
    assert expected.format(version=data["medhorizon"].version) in err
    with pytest.raises(DataError) as ei:
        S.validate_submission(bad, data["medhorizon"])
    assert expected.format(version=data["medhorizon"].version) in str(ei.value)


def test_validate_lists_every_problem_and_bad_json(tmp_path, files, data, capsys):
    sub = _good(data)
    sub["metadata"]["date"] = "yesterday"
    sub["metadata"]["data_version"] = "sha256:ffffffffffffffff"
    del sub["metadata"]["size"]
    sub["predictions"] = sub["predictions"][1:] + [sub["predictions"][4], {"id": "x9", "output": "B"}]
    bad = tmp_path / "bad.json"
    S.write_submission(sub, bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "medhorizon-tasks-submission",\n "metadata": }')
    good = tmp_path / "good.json"
    S.write_submission(_good(data), good)
    rc, out, err = run_cli(capsys, "leaderboard", "validate", good, bad, broken, "--data", files["medhorizon"])
    assert rc == 1
    assert out.startswith(f"OK {good}")
    assert f"{bad}: INVALID, 6 problem(s):" in err
    for text in ("metadata.size: missing", "metadata.date: 'yesterday' is not a date",
                 "data_version mismatch: expected " + data["medhorizon"].version, "got sha256:ffffffffffffffff",
                 "duplicate id(s), each must be predicted once: 4 (2 times)",
                 "missing id(s): 1 of the 52 items of the data have no prediction: 0",
                 "extra id(s): 1 id(s) are not items of the data: x9"):
        assert text in err
    assert f"{broken}: INVALID, 1 problem(s):\n  - line 2: not valid JSON (Expecting value at column 14)" in err


def test_validate_surghi_and_sureon_specifics(tmp_path, files, data, capsys):
    g = data["surghi"]
    sub = surghi_submission(g, "m", lambda i, r: (r.phase, r.step))
    sub["predictions"][5] = dict(sub["predictions"][4])
    sub["predictions"].append({"dataset": "toyC", "video": "v", "frame": 0, "phase": None, "step": None})
    sub["predictions"].append({"dataset": "toyA", "video": "vid0", "frame": -1, "phase": None, "step": None})
    with pytest.raises(DataError) as ei:
        S.validate_submission(sub, g)
    text = str(ei.value)
    assert "duplicate id(s), each must be predicted once: toyA/vid0/100 (2 times)" in text
    assert "missing id(s): 1 of the 64 items of the data have no prediction: toyA/vid0/125" in text
    assert "extra id(s): 1 id(s) are not items of the data: toyC/v/0" in text
    assert "predictions[65]: frame: expected an integer >= 0, got -1" in text

    s = mcq_submission(data["sureon"], "m", lambda i: True, mode="text")
    with pytest.raises(DataError, match="metadata.mode: expected one of visual, blind for sureon, got 'text'"):
        S.validate_submission(s, data["sureon"])
    # A submission for one benchmark checked against another's data.
    with pytest.raises(DataError) as ei:
        S.validate_submission(_good(data), data["sureon"])
    assert ei.value.problems == [
        f"metadata.benchmark: this is a medhorizon submission, not sureon: the data given ({data['sureon'].source}) "
        "is Sureon data; validate it against the MedHorizon data (--data medhorizon=PATH)"]


# ------------------------------------------------------------------ build: MedHorizon and Sureon

def _csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_build_medhorizon_ranks_cis_and_tests(tmp_path, data):
    d = data["medhorizon"]
    subs = [mcq_submission(d, "Random-ish", random_ish(1), size="unknown"),
            mcq_submission(d, "Perfect", lambda i: True, url="https://example.org/perfect"),
            mcq_submission(d, "Half", lambda i: i % 2 == 0, input_protocol={"fps": None, "cap": None, "frames": 32}),
            mcq_submission(d, "Almost", lambda i: i != 10)]
    (board,) = B.build_leaderboard(subs, {"medhorizon": d}, n_resamples=NR)
    names = [e.metadata["model"] for e in board.entries]
    assert names == ["Perfect", "Almost", "Half", "Random-ish"]
    assert [e.rank for e in board.entries] == [1, 2, 3, 4]
    random_acc = sum(random_ish(1)(i) for i in range(52)) / 52
    assert [e.headline for e in board.entries] == pytest.approx([1.0, 51 / 52, 0.5, random_acc])
    for e in board.entries:
        assert e.ci[0] <= e.headline <= e.ci[1] and e.n == 52
    assert board.entries[0].ci == (1.0, 1.0)  # every item right: the bootstrap interval collapses
    assert board.entries[2].ci[0] < 0.4 and board.entries[2].ci[1] > 0.6
    perfect, almost, half, rnd = board.entries
    assert perfect.significant is None and perfect.p_value is None
    assert almost.significant is False and almost.p_value == 1.0  # one discordant item: exact McNemar p = 1
    assert half.significant and rnd.significant and rnd.p_holm < 1e-6
    # Holm over the three comparisons: the smallest raw p is multiplied by 3.
    assert rnd.p_holm == pytest.approx(min(1.0, 3 * rnd.p_value))
    assert half.secondary["fine_grained"] is not None and rnd.secondary["invalid"] == 0

    md = T.format_markdown([board], "Test board")
    assert "## MedHorizon" in md
    assert "| 1 | [Perfect](https://example.org/perfect) | 7B | 1 fps, cap 64 | 2025-06-30 | 100.0 [100.0, 100.0], " \
           "Wilson [93.1, 100.0] | 52 items | — (leader) |" in md
    assert "| 2 | Almost | 7B | 1 fps, cap 64 | 2025-06-30 | 98.1 [" in md and "| no (p=1.000) |" in md
    assert "| 3 | Half | 7B | 32 frames |" in md
    assert f"Data version {d.version}; 4 entries." in md

    rows = _csv_rows(T.format_csv([board]))
    assert [r["model"] for r in rows] == names and [r["rank"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[0]["sig_vs_leader"] == "leader" and rows[0]["p_vs_leader"] == ""
    assert rows[1]["sig_vs_leader"] == "no" and rows[3]["sig_vs_leader"] == "yes"
    assert float(rows[2]["value"]) == 0.5 and rows[2]["frames"] == "32" and rows[2]["fps"] == ""
    assert float(rows[3]["ci95_low"]) <= float(rows[3]["value"]) <= float(rows[3]["ci95_high"])
    assert rows[0]["data_version"] == d.version and rows[0]["n"] == "52" and rows[0]["n_unit"] == "items"
    assert float(rows[2]["ci95_wilson_low"]) < 0.5 < float(rows[2]["ci95_wilson_high"])


def test_build_tests_every_entry_against_the_leader_as_statsmodels_does(data):
    """Issue 46: the board's McNemar p of each entry against the leader (all entries at once) is statsmodels'
    ``mcnemar`` bit for bit, in the exact branch (the leader right where "Close" is wrong on 11 items and wrong
    where it is right on 4: statsmodels' tail ends in ...24999, the exactly summed one in ...25) and the
    chi-square branch."""
    from statsmodels.stats.contingency_tables import mcnemar

    d = data["medhorizon"]
    leader = lambda i: i < 45  # noqa: E731
    entries = {"Leader": leader, "Close": lambda i: 11 <= i < 49, "Far": lambda i: i % 5 == 0 or i >= 45,
               "Random-ish": random_ish(2, 0.5)}
    (board,) = B.build_leaderboard([mcq_submission(d, m, right) for m, right in entries.items()],
                                   {"medhorizon": d}, n_resamples=NR)
    assert board.entries[0].metadata["model"] == "Leader"
    for e in board.entries[1:]:
        right = entries[e.metadata["model"]]
        table = [[sum(leader(i) and right(i) for i in range(52)), sum(leader(i) and not right(i) for i in range(52))],
                 [sum(right(i) and not leader(i) for i in range(52)),
                  sum(not leader(i) and not right(i) for i in range(52))]]
        ref = mcnemar(table, exact=table[0][1] + table[1][0] < 25, correction=True)
        assert e.p_value == ref.pvalue, e.metadata["model"]
    close = next(e for e in board.entries if e.metadata["model"] == "Close")
    assert close.p_value == 0.11846923828124999


def test_build_sureon_mu_excludes_sm_and_ties_share_a_rank(data):
    d = data["sureon"]
    subs = [mcq_submission(d, "Perfect", lambda i: True),
            mcq_submission(d, "Random-ish", random_ish(2, p=1 / 7)),
            mcq_submission(d, "Perfect blind", lambda i: True, mode="blind",
                           input_protocol={"fps": None, "cap": None, "frames": 0})]
    (board,) = B.build_leaderboard(subs, {"sureon": d}, n_resamples=NR)
    assert board.metric == "μ (MCQ + TO)"
    assert [e.metadata["model"] for e in board.entries] == ["Perfect", "Perfect blind", "Random-ish"]
    assert [e.rank for e in board.entries] == [1, 1, 3]
    perfect, blind, rnd = board.entries
    assert perfect.n == 44 and perfect.headline == 1.0  # 40 MCQ + 4 TO; the 2 SM items are not in mu
    assert blind.significant is False and blind.p_value == 1.0
    assert rnd.significant and rnd.ci[0] <= rnd.headline <= rnd.ci[1]
    _, rows = T.table_rows(board)
    assert rows[1][3] == "0 frames, blind"
    assert "SM (sequence summarization) is judged" in T.board_footnote(board)


# ------------------------------------------------------------------ build: SurgHiBench

def wrong_labels(r):
    """A valid but wrong (phase, step) for row r."""
    labels = _LABELS[r.dataset]
    k = labels.index((r.phase, r.step))
    return labels[(k + 2) % 4]


def test_build_surghi_perfect_near_tie_and_all_wrong(data):
    g = data["surghi"]
    subs = [surghi_submission(g, "All wrong", lambda i, r: wrong_labels(r)),
            surghi_submission(g, "Perfect", lambda i, r: (r.phase, r.step)),
            surghi_submission(g, "One frame off", lambda i, r: wrong_labels(r) if i == 0 else (r.phase, r.step))]
    (board,) = B.build_leaderboard(subs, {"surghi": g}, n_resamples=NR)
    perfect, near, wrong = board.entries
    assert [e.metadata["model"] for e in board.entries] == ["Perfect", "One frame off", "All wrong"]
    assert perfect.headline == 1.0 and perfect.ci == (1.0, 1.0)  # every video perfect: nothing to resample
    assert wrong.headline == 0.0 and wrong.ci == (0.0, 0.0)
    # One of 32 toyA frames wrong in both labels: toyA phase = step acc = (3 * 1 + 7/8) / 4 = 31/32.
    assert near.headline == pytest.approx((31 / 32 + 1) / 2)
    assert near.ci[0] <= near.headline <= near.ci[1] == 1.0
    assert near.secondary["multi_level[toyA]"] == pytest.approx(31 / 32)
    assert near.secondary["multi_level[toyB]"] == 1.0 and near.n == 8
    assert near.significant is False and near.p_value == 1.0  # one video differs: half the swaps favour each
    # exact paired permutation test over the 8 videos: only "no swap" is as extreme -> p = 2 / 2^8
    assert wrong.significant and wrong.p_value == pytest.approx(2 / 256)
    assert board.n_unit == "videos" and "stratified by dataset" in board.ci_method
    rows = _csv_rows(T.format_csv([board]))
    assert rows[1]["multi_level[toyA]"] == str(round(31 / 32, 6)) and rows[2]["sig_vs_leader"] == "yes"


def test_surghi_bootstrap_hand_checkable():
    def vm(acc):  # the per-video metrics a video with this phase and step accuracy has
        return {"phase_acc": acc, "step_acc": acc, "phase_f1": acc, "step_f1": acc, "multi_level": acc,
                "both_wrong": 1 - acc, "both_right": acc, "step_given_phase": 1.0 if acc else math.nan,
                "sibling": acc, "cousin": 1 - acc, "semantic_step": acc, "n_videos": 1, "n_invalid": 0}

    # One dataset, a perfect video and an all-wrong one: a resample holds two perfect videos (1/4,
    # multi-level 1), two wrong ones (1/4, 0) or one of each (1/2, sqrt(1/2 * 1/2) = 1/2).
    dist = B.surghi_bootstrap([{"d": [vm(1.0), vm(0.0)]}], n_resamples=4000, seed=0)[0]
    values, counts = np.unique(dist, return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0]
    assert counts / 4000 == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    assert np.percentile(dist, [2.5, 97.5]).tolist() == [0.0, 1.0]
    # Identical videos: every resample is the point.
    same = B.surghi_bootstrap([{"a": [vm(0.6)] * 5, "b": [vm(0.2)] * 3}], n_resamples=50)[0]
    assert len(set(same.tolist())) == 1 and same[0] == pytest.approx(0.4)
    # Paired: two entries see the same resampled videos, so equal entries never differ.
    pair = B.surghi_bootstrap([{"d": [vm(1.0), vm(0.0), vm(0.5)]}] * 2, n_resamples=200, seed=3)
    assert (pair[0] == pair[1]).all()
    # Paired permutation test, by hand: leader perfect on 2 videos, other all wrong. Of the 4 swap
    # patterns, none -> +1, both -> -1, one -> sqrt(.5 * .5) - sqrt(.5 * .5) = 0; two-sided p = 2 * 1/4.
    lead, other = {"d": [vm(1.0), vm(1.0)]}, {"d": [vm(0.0), vm(0.0)]}
    assert B.paired_permutation_pvalue(lead, other) == pytest.approx(0.5)
    assert B.paired_permutation_pvalue(lead, lead) == 1.0
    # Randomized beyond n_resamples arrangements (2^12 > 500), and then never 0: the observed one counts.
    many = B.paired_permutation_pvalue({"d": [vm(1.0)] * 12}, {"d": [vm(0.0)] * 12}, n_resamples=500)
    assert 0 < many <= 2 / 501 + 1e-12
    with pytest.raises(DataError, match="not on the same datasets and videos"):
        B.paired_permutation_pvalue(lead, {"d": [vm(0.0)]})
    with pytest.raises(DataError, match="not on the same datasets and videos"):
        B.surghi_bootstrap([{"d": [vm(1.0)]}, {"d": [vm(1.0), vm(0.0)]}], n_resamples=5)


# ------------------------------------------------------------------ build: refusals and the command

def test_build_refuses_other_data_versions_and_invalid_submissions(tmp_path, files, data):
    d = data["medhorizon"]
    recs = release_records()
    recs[0]["qa"][0]["answer"] = "D"
    other = D.load_benchmark_data("medhorizon", write_jsonl(tmp_path / "edited.jsonl", recs))
    on_other = mcq_submission(other, "Other data", lambda i: True)
    broken = mcq_submission(d, "Broken", lambda i: True)
    broken["predictions"].pop()
    out = tmp_path / "board"
    with pytest.raises(DataError) as ei:
        B.build_leaderboard([mcq_submission(d, "Fine", lambda i: True), on_other, broken], {"medhorizon": d},
                            n_resamples=NR)
    text = str(ei.value)
    assert text.startswith("leaderboard: refused, invalid submission(s): 2 problem(s)")
    assert (f"submission #2: metadata.data_version: data_version mismatch: expected {d.version}" in text
            and f"got {other.version}" in text and "not comparable" in text)
    assert "submission #3: predictions: missing id(s): 1 of the 52 items" in text
    assert not out.exists()
    with pytest.raises(DataError, match="submission #1: this is a sureon submission, not medhorizon: "
                                        "no data given for benchmark sureon"):
        B.build_leaderboard([mcq_submission(data["sureon"], "m", lambda i: True)], {"medhorizon": d})
    with pytest.raises(DataError, match="n_resamples must be an integer >= 1, got 0"):
        B.build_leaderboard([mcq_submission(d, "m", lambda i: True)], {"medhorizon": d}, n_resamples=0)


def test_build_command_three_benchmarks(tmp_path, files, data, capsys):
    paths = []
    for name, sub in [("mh_a", mcq_submission(data["medhorizon"], "Perfect", lambda i: True)),
                      ("mh_b", mcq_submission(data["medhorizon"], "Half", lambda i: i % 2 == 0)),
                      ("so_a", mcq_submission(data["sureon"], "Perfect", lambda i: True)),
                      ("sg_a", surghi_submission(data["surghi"], "Perfect", lambda i, r: (r.phase, r.step))),
                      ("sg_b", surghi_submission(data["surghi"], "Wrong", lambda i, r: wrong_labels(r)))]:
        paths.append(S.write_submission(sub, tmp_path / f"{name}.json"))
    out = tmp_path / "board"
    rc, stdout, err = run_cli(capsys, "leaderboard", "build", *paths, "--data", f"medhorizon={files['medhorizon']}",
                              "--data", f"sureon={files['sureon']}", "--data", f"surghi={files['surghi']}",
                              "--hierarchy", files["hierarchy"], "--out", out, "--n-resamples", "50", "--title", "Boards")
    assert rc == 0, err
    assert "MedHorizon: 2 entries" in stdout and "SurgHiBench: 2 entries" in stdout
    rows = _csv_rows((out / "leaderboard.csv").read_text())
    assert [(r["benchmark"], r["model"], r["rank"]) for r in rows] == [
        ("medhorizon", "Perfect", "1"), ("medhorizon", "Half", "2"), ("sureon", "Perfect", "1"),
        ("surghi", "Perfect", "1"), ("surghi", "Wrong", "2")]
    assert rows[4]["fine_grained"] == "" and rows[4]["phase_acc"] == "0.0" and rows[0]["phase_acc"] == ""
    md = (out / "leaderboard.md").read_text()
    assert md.startswith("# Boards") and md.index("## MedHorizon") < md.index("## Sureon") < md.index("## SurgHiBench")
    assert "Overall multi-level % [95% CI]" in md and "toyA multi-level" in md
    assert "<table" in (out / "leaderboard.html").read_text()

    # A --data without a benchmark cannot serve two benchmarks.
    rc, _, err = run_cli(capsys, "leaderboard", "build", paths[0], paths[2], "--data", files["medhorizon"],
                         "--out", tmp_path / "other")
    assert rc == 2 and (f"--data {files['medhorizon']} names no benchmark, and the submissions are for medhorizon "
                        "and sureon: pass --data medhorizon=PATH --data sureon=PATH") in err
    # Bad data is reported as the data's problem (exit 2), naming the benchmark.
    bad = tmp_path / "bad_sureon.jsonl"
    bad.write_text('{"uid": "x1"}\n')
    rc, _, err = run_cli(capsys, "leaderboard", "validate", paths[2], "--data", f"sureon={bad}")
    assert rc == 2 and f"sureon data {bad}: " in err and "item x1 (line 1): field 'category'" in err
    assert not (tmp_path / "other").exists()


def test_markdown_cells_are_text(data):
    d = data["medhorizon"]
    sub = mcq_submission(d, "Net <b>v2</b> | big & fast", lambda i: True, url="https://example.org/a_(b)")
    md = T.format_markdown(B.build_leaderboard([sub], {"medhorizon": d}, n_resamples=10))
    assert "| [Net &lt;b&gt;v2&lt;/b&gt; \\| big &amp; fast](https://example.org/a_%28b%29) |" in md
    assert "| — (leader) |" in md and md.count("\n| 1 |") == 1


# ------------------------------------------------------------------ hostile text: spreadsheet formulas, Markdown

def test_csv_cells_cannot_start_a_formula_and_numbers_stay_numbers(data):
    d = data["medhorizon"]
    subs = [mcq_submission(d, '=HYPERLINK("http://evil.example","x")', lambda i: True, size="+1+2",
                           notes="@SUM(A1)"),
            mcq_submission(d, "-2+3", lambda i: i % 2 == 0, size="-0.5", notes="\tTAB"),
            mcq_submission(d, "\rCR", lambda i: i % 3 == 0, size="7B", notes="-1e5")]
    text = T.format_csv(B.build_leaderboard(subs, {"medhorizon": d}, n_resamples=10))
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}
    assert sorted(rows) == ["'\nCR", "'-2+3", "'=HYPERLINK(\"http://evil.example\",\"x\")"]
    first = rows["'=HYPERLINK(\"http://evil.example\",\"x\")"]
    assert (first["size"], first["notes"]) == ("'+1+2", "'@SUM(A1)")
    second = rows["'-2+3"]
    assert (second["size"], second["notes"]) == ("-0.5", "'\tTAB")  # a plain number is left a number
    assert rows["'\nCR"]["notes"] == "-1e5"  # the carriage return is a line feed, inside quotes
    for row in rows.values():
        assert float(row["value"]) >= 0 and not row["value"].startswith("'")
        for cell in row.values():
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                float(cell)  # only plain numbers may start so


def _links(md):
    """(text, destination) of every Markdown inline link (unescaped brackets)."""
    return re.findall(r"(?<!\\)\[((?:\\.|[^\\\]])*)\]\(([^)\s]*)\)", md)


def test_markdown_carries_no_html_and_links_only_to_http(data):
    d = data["medhorizon"]
    subs = [mcq_submission(d, "[click](javascript:alert(1)) <img src=x onerror=alert(1)>", lambda i: True,
                           size="<script>alert(1)</script>", url='https://a.example/"><img/src=x/onerror=alert(1)>'),
            mcq_submission(d, "![pic](https://evil.example/p.png) `code` *em* &#60;b&#62; two\nlines a\\|b",
                           lambda i: i % 2 == 0)]
    boards = B.build_leaderboard(subs, {"medhorizon": d}, n_resamples=10)
    md = T.format_markdown(boards)
    assert "<" not in md and ">" not in md  # no tag, comment or autolink can start
    assert _links(md) == [(r"\[click\](javascript:alert(1)) &lt;img src=x onerror=alert(1)&gt;",
                           "https://a.example/%22%3E%3Cimg/src=x/onerror=alert%281%29%3E")]
    assert "&amp;#60;b&amp;#62;" in md  # the submitter's entities are shown, not decoded
    assert r"!\[pic\](https://evil.example/p.png) \`code\` \*em\*" in md
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table) == 4  # header, alignment, two entries: the line break did not add a row
    pipes = {len(re.findall(r"(?<!\\)\|", line)) for line in table}
    assert len(pipes) == 1  # no cell was split by a pipe of the submitter's

    # Validation refuses a non-http url; the writer checks again for boards built from other values.
    boards[0].entries[0].metadata["url"] = "javascript:alert(1)"
    assert _links(T.format_markdown(boards)) == []
    boards[0].entries[0].metadata["url"] = "HTTPS://ok.example/a b"
    assert [u for _, u in _links(T.format_markdown(boards))] == ["HTTPS://ok.example/a%20b"]


# ------------------------------------------------------------------ a submission for another benchmark

def test_a_submission_for_another_benchmark_says_so(tmp_path, files, data, capsys):
    so = S.write_submission(mcq_submission(data["sureon"], "m", lambda i: True), tmp_path / "so.json")
    release = files["medhorizon"]
    for args, given in [(["validate", so, "--data", release], release),
                        (["validate", so, "--data", f"sureon={release}"], f"sureon={release}"),
                        (["build", so, "--data", release, "--out", tmp_path / "b"], release)]:
        rc, out, err = run_cli(capsys, "leaderboard", *args)
        assert rc == 2 and not out
        assert err == (f"medhorizon-tasks leaderboard: error: {so}: this is a sureon submission, not medhorizon: "
                       f"--data {given} is MedHorizon data, not Sureon data; pass the Sureon data with "
                       "--data sureon=PATH\n")
    rc, out, err = run_cli(capsys, "leaderboard", "validate", so, "--data", f"medhorizon={release}")
    assert rc == 2 and err == (f"medhorizon-tasks leaderboard: error: {so}: this is a sureon submission, not "
                               "medhorizon: --data gives medhorizon data only; pass --data sureon=PATH\n")
    assert not (tmp_path / "b").exists()

    with pytest.raises(DataError) as ei:
        S.validate_submission(so, data["medhorizon"])
    assert ei.value.problems == [f"metadata.benchmark: this is a sureon submission, not medhorizon: the data given "
                                 f"({release}) is MedHorizon data; validate it against the Sureon data "
                                 "(--data sureon=PATH)"]
    with pytest.raises(DataError, match=f"{so}: this is a sureon submission, not medhorizon: no data given"):
        B.build_leaderboard([so], {"medhorizon": data["medhorizon"]}, n_resamples=10)


# ------------------------------------------------------------------ writing on a full disk

def _disk_full(monkeypatch, folder):
    import errno
    import os

    real_write = os.write
    folder = str(folder.resolve())

    def write(fd, buf):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(folder):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, buf)

    monkeypatch.setattr(os, "write", write)


def test_build_on_a_full_disk_is_one_message_and_keeps_the_previous_board(tmp_path, files, data, capsys,
                                                                          monkeypatch):
    d = data["medhorizon"]
    a = S.write_submission(mcq_submission(d, "A", lambda i: True), tmp_path / "a.json")
    b = S.write_submission(mcq_submission(d, "B", lambda i: i % 2 == 0), tmp_path / "b.json")
    out = tmp_path / "board"
    rc, _, err = run_cli(capsys, "leaderboard", "build", a, "--data", files["medhorizon"], "--out", out,
                         "--n-resamples", "20")
    assert rc == 0, err
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _disk_full(monkeypatch, out)
    rc, stdout, err = run_cli(capsys, "leaderboard", "build", a, b, "--data", files["medhorizon"], "--out", out,
                              "--n-resamples", "20")
    assert rc == 2 and not stdout
    assert err == (f"medhorizon-tasks leaderboard: error: cannot write {out / 'leaderboard.md'}: "
                   "No space left on device\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # all three as they were, no temporary file

    rc, _, err = run_cli(capsys, "leaderboard", "make", "--benchmark", "medhorizon", "--data", files["medhorizon"],
                         "--predictions", tmp_path / "none.jsonl", "--model", "m", "--model-size", "1B", "--out", out / "s.json")
    assert rc == 2 and "file not found" in err
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"uid": it.uid, "prediction": it.answer}) + "\n" for it in d.items))
    rc, _, err = run_cli(capsys, "leaderboard", "make", "--benchmark", "medhorizon", "--data", files["medhorizon"],
                         "--predictions", preds, "--model", "m", "--model-size", "1B", "--out", out / "s.json")
    assert rc == 2 and err == (f"medhorizon-tasks leaderboard: error: cannot write {out / 's.json'}: "
                               "No space left on device\n")
    assert sorted(p.name for p in out.iterdir()) == sorted(before)
