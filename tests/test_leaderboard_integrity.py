"""The board's integrity without a server (issue 45 item 1): which tasks are the standard protocol (one registry,
``benchmarks/standard.py``), off-protocol entries marked and ranked apart by ``leaderboard build``, MG pairing
as a parameter of ranking, and the content key that makes one run one entry."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
import yaml

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.benchmarks.standard import entry_departures, run_departures
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.leaderboard.build import build_leaderboard, pair_by_key, rank_board, score_entry
from medhorizon_tasks.leaderboard.submission import (
    FORMAT,
    FORMAT_VERSION,
    content_key,
    dumps_submission,
    make_submission,
    validate_submission,
)
from medhorizon_tasks.leaderboard.tables import format_csv, format_markdown

TASKS = Path(__file__).resolve().parents[1] / "task_yaml"
STANDARD = {"medhorizon", "medhorizon_synthetic", "sureon_visual", "sureon_blind", "sureon_synthetic_visual",
            "sureon_synthetic_blind", "surghi", "surghi_synthetic"}


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def _task_kwargs(name: str) -> dict:
    """A task YAML's ``lmms_eval_specific_kwargs``, from the file it includes when it has none of its own."""
    path = TASKS / name if (TASKS / name).is_file() else TASKS / f"{name}.yaml"
    doc = yaml.load(path.read_text(), Loader=_Loader) or {}
    kwargs = (doc.get("lmms_eval_specific_kwargs") or {}).get("default")
    if kwargs is None and doc.get("include") and (TASKS / doc["include"]).is_file():
        return _task_kwargs(doc["include"])
    return kwargs or {}


def test_the_registry_calls_the_papers_settings_standard_and_every_diagnostic_task_not():
    seen_off = set()
    for path in sorted(TASKS.glob("*.yaml")):
        doc = yaml.load(path.read_text(), Loader=_Loader) or {}
        task = doc.get("task")
        if not isinstance(task, str):
            continue  # a group
        bench = next(b for b in ("medhorizon", "sureon", "surghi") if task.startswith(b))
        departures = run_departures(bench, task, _task_kwargs(path.stem))
        standard = task in STANDARD or any(task.startswith(p) and task[len(p):].isdigit() for p in
                                           ("medhorizon_cap", "medhorizon_frames", "medhorizon_synthetic_frames"))
        assert (departures == []) == standard, (task, departures)
        if not standard:
            seen_off.add(task)
    assert {"medhorizon_synthetic_order_reverse", "medhorizon_text", "medhorizon_oracle", "medhorizon_aks128",
            "medhorizon_sampling_hybrid_32", "medhorizon_sampling_uniform_32", "medhorizon_order_original",
            "sureon_visual_noblur"} <= seen_off
    assert run_departures("medhorizon", "medhorizon_synthetic_order_reverse",
                          _task_kwargs("medhorizon_synthetic_order_reverse")) == ["frame order: reverse"]
    assert run_departures("sureon", "sureon_visual_noblur", _task_kwargs("sureon_visual_noblur")) == ["no blur"]
    assert run_departures("medhorizon", "my_own_task", {"fps": 1, "cap": 64}) == \
        ["task my_own_task is not a standard task of the protocol"]
    # what a submission's metadata shows
    assert entry_departures({"benchmark": "medhorizon", "input_protocol": {"frames": 0}}) == ["text only (no frames)"]
    assert entry_departures({"benchmark": "sureon", "input_protocol": {"frames": 0}, "mode": "blind"}) == []
    assert entry_departures({"benchmark": "medhorizon", "input_protocol": {"fps": 1, "cap": 64, "frames": None}}) == []


@pytest.fixture(scope="module")
def datas():
    return {b: load_benchmark_data(b, synthetic_paths(b)[0]) for b in ("medhorizon", "sureon")}


def _samples(folder: Path, task: str, kwargs: dict | None, outputs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20261201_000000_samples_{task}.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "filtered_resps": [o], "accuracy": {"uid": u, "mode": "visual"}})
                            + "\n" for i, (u, o) in enumerate(outputs)))
    if kwargs is not None:
        (folder / "20261201_000000_results.json").write_text(json.dumps(
            {"config": {"model": "m"}, "configs": {task: {"lmms_eval_specific_kwargs": {"default": kwargs}}}}))
    return path


def _outputs(data, accuracy: float, seed: int):
    rng = random.Random(seed)
    return [(it.uid, it.answer if rng.random() < accuracy else "ABCD"[("ABCD".index(it.answer) + 1) % 4])
            for it in data.items]


def test_build_marks_an_off_protocol_run_and_ranks_it_apart(datas, tmp_path):
    data = datas["medhorizon"]
    reverse = _samples(tmp_path / "rev", "medhorizon_synthetic_order_reverse",
                       _task_kwargs("medhorizon_synthetic_order_reverse"), _outputs(data, 1.0, 1))
    made = make_submission(data, reverse, model="Reversed", size="7B")
    assert made["metadata"]["departures"] == ["frame order: reverse"]
    standard = [make_submission(data, _samples(tmp_path / f"s{k}", "medhorizon_synthetic",
                                               _task_kwargs("medhorizon"), _outputs(data, acc, k)),
                                model=f"Standard-{k}", size="7B") for k, acc in ((2, 0.8), (3, 0.5))]
    assert all("departures" not in s["metadata"] for s in standard)
    (board,) = build_leaderboard([made, *standard], {"medhorizon": data}, n_resamples=100)
    order = [(e.metadata["model"], e.rank, e.off_protocol) for e in board.entries]
    assert order == [("Standard-2", 1, []), ("Standard-3", 2, []), ("Reversed", 0, ["frame order: reverse"])]
    rev = board.entries[-1]
    assert rev.headline == 1.0 and rev.p_value is None and not rev.is_leader
    assert board.entries[1].p_value is not None  # tested against the standard leader, not the reversed run
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(format_csv([board])))}
    assert rows["Reversed"]["off_protocol"] == "frame order: reverse" and rows["Reversed"]["rank"] == ""
    assert rows["Reversed"]["sig_vs_leader"] == "" and rows["Standard-2"]["sig_vs_leader"] == "leader"
    md = format_markdown([board])
    assert "| off protocol | Reversed \\[off protocol: frame order: reverse\\] |" in md
    assert "Off protocol:" in md


def _sureon(data, model: str, mode: str, accuracy: float, seed: int) -> dict:
    rng = random.Random(seed)
    preds = []
    for it in data.items:
        right = rng.random() < accuracy
        out = (it.answer if right else "B" if it.answer != "B" else "C") if it.kind == "mcq" else \
            " > ".join(it.answer if right else reversed(it.answer)) if it.kind == "to" else "text"
        preds.append({"id": it.uid, "output": out})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "7B", "mode": mode, "date": "2026-12-01", "benchmark": "sureon",
                         "data_version": data.version,
                         "input_protocol": {"fps": None, "cap": None, "frames": 0 if mode == "blind" else None}},
            "predictions": preds}


def test_mg_pairing_is_a_parameter_build_pairs_by_name_the_service_by_key(datas):
    data = datas["sureon"]
    subs = [validate_submission(_sureon(data, "M", "visual", 0.9, 1), data),
            validate_submission(_sureon(data, "M", "blind", 0.3, 2), data)]
    (board,) = build_leaderboard([_sureon(data, "M", m, a, s) for m, a, s in (("visual", 0.9, 1), ("blind", 0.3, 2))],
                                 {"sureon": data}, n_resamples=100)
    visual = next(e for e in board.entries if e.metadata["mode"] == "visual")
    assert visual.secondary["mg"] > 0 and "same model name" in " ".join(board.notes)
    # by key: entries without one (no submitter token) are never paired; the column stays, empty, with its note
    entries = [score_entry(s, data, n_resamples=100) for s in subs]
    for e in entries:
        e.pair_key = None
    board = rank_board("sureon", data, entries, n_resamples=100, pair=pair_by_key, pair_rule="one token")
    assert ("mg", "MG vs blind [95% CI]", "mg") in board.secondary
    assert all("mg" not in e.secondary for e in board.entries) and "one token" in " ".join(board.notes)
    entries = [score_entry(s, data, n_resamples=100) for s in subs]
    for e in entries:
        e.pair_key = ("token:a", "M")
    board = rank_board("sureon", data, entries, n_resamples=100, pair=pair_by_key, pair_rule="one token")
    assert next(e for e in board.entries if e.metadata["mode"] == "visual").secondary["mg"] == \
        pytest.approx(visual.secondary["mg"])


def test_the_content_key_is_the_run_not_its_bytes(datas, tmp_path):
    data = datas["medhorizon"]
    samples = _samples(tmp_path / "r", "medhorizon_synthetic", _task_kwargs("medhorizon"), _outputs(data, 0.7, 1))
    made = make_submission(data, samples, model="A", size="7B", date="2026-01-01")
    key = content_key(validate_submission(made, data))
    renamed = json.loads(json.dumps(made))
    renamed["metadata"].update(model="B", date="2026-02-02", notes="again")
    renamed["metadata"]["input_protocol"]["fps"] = 1  # 1 and 1.0 are one number
    renamed["predictions"].reverse()
    assert content_key(validate_submission(json.loads(dumps_submission(renamed)), data)) == key
    other_output = json.loads(json.dumps(made))
    other_output["predictions"][0]["output"] += " "
    other_protocol = json.loads(json.dumps(made))
    other_protocol["metadata"]["input_protocol"]["cap"] = 128
    departed = json.loads(json.dumps(made))
    departed["metadata"]["departures"] = ["frame order: reverse"]
    keys = {content_key(validate_submission(s, data)) for s in (other_output, other_protocol, departed)}
    assert len(keys) == 3 and key not in keys


def test_a_store_made_before_content_keys_gets_them_and_remembers_deletions(tmp_path):
    """A store written by the previous version (no content_key columns) is opened as it is: the columns are
    added in place, its old rows kept (without a key), new rows deduplicated by content and deletions remembered."""
    import sqlite3

    from medhorizon_tasks.service.store import DeletedBefore, Store

    path = tmp_path / "old.sqlite3"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE mh_meta (key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO mh_meta VALUES ('schema_version', '1');
        CREATE TABLE mh_submissions (id INTEGER PRIMARY KEY, sha256 VARCHAR(64) NOT NULL UNIQUE,
            received_at VARCHAR(32) NOT NULL, benchmark VARCHAR(32) NOT NULL, data_version VARCHAR(64) NOT NULL,
            model TEXT NOT NULL, kind VARCHAR(16) NOT NULL, filename TEXT, submitter TEXT, state VARCHAR(16) NOT NULL,
            received BLOB NOT NULL, submission BLOB);
        CREATE TABLE mh_actions (id INTEGER PRIMARY KEY, submission_id INTEGER NOT NULL, sha256 VARCHAR(64) NOT NULL,
            model TEXT NOT NULL, action VARCHAR(16) NOT NULL, reason TEXT NOT NULL, at VARCHAR(32) NOT NULL);
        CREATE TABLE mh_submitters (id INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL UNIQUE,
            token_sha256 VARCHAR(64) NOT NULL UNIQUE, created_at VARCHAR(32) NOT NULL);
        INSERT INTO mh_submissions VALUES (1, 'aa', '2026-01-01T00:00:00+00:00', 'medhorizon', 'sha256:0', 'old',
            'submission', NULL, NULL, 'public', X'7B7D', NULL);
    """)
    con.commit()
    con.close()
    store = Store(f"sqlite:///{path}")
    (old,) = store.list()
    assert old.model == "old" and old.content_key is None
    common = dict(benchmark="medhorizon", data_version="sha256:0", model="m", kind="submission", filename=None,
                  submitter=None, submission=None)
    row, new = store.add(received=b"{ }", content_key="k1", **common)
    assert new and row.content_key == "k1"
    again, new = store.add(received=b"{  }", content_key="k1", **common)  # other bytes, the same run
    assert not new and again.id == row.id
    store.act(row.id, "delete", "withdrawn")
    with pytest.raises(DeletedBefore, match=f"entry {row.id}, deleted .* withdrawn"):
        store.add(received=b"{   }", content_key="k1", **common)
    store.act(row.id, "restore", "allowed again")
    back, new = store.add(received=b"{   }", content_key="k1", **common)
    assert new and back.content_key == "k1"
    assert [a.action for a in store.actions()] == ["delete", "restore"]
    store.close()
