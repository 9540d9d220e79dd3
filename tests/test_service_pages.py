"""The served board's parts that need no server (issue 45 item 5): the paper's published rows as reference rows
on a board whose data are the paper's release (and why there are none on other data), the verified mark read
from the store's action log, and the maintainers' sessions (expiry, the token's rotation, tampering)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.benchmarks.published import published_rows
from medhorizon_tasks.service.board_page import Filters, reference_rows, served_board_page
from medhorizon_tasks.service.maintainer_pages import SESSION_SECONDS, Sessions
from medhorizon_tasks.service.store import open_store
from published_release import published_items, write_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A MedHorizon release with the paper's counts (1,253 items, 340 videos): the paper's data, to the board."""
    return load_benchmark_data("medhorizon", write_release(tmp_path_factory.mktemp("release") / "test.jsonl",
                                                           published_items()))


def test_a_board_on_the_papers_release_shows_its_published_rows_as_reported_and_unranked(release):
    rows, problems = reference_rows("medhorizon", release)
    printed = [r for r in published_rows("medhorizon", table="Table 2") if r.printed.get("overall") not in (None, "—")]
    assert problems == [] and len(rows) == len(printed) > 10
    assert [(r["model"], r["reported"]) for r in rows] == [(r.model, r.printed["overall"]) for r in printed]
    assert not any(r["verified"] for r in rows)
    # a board with no entry yet: the empty state, and the paper's rows under it, each marked "reported", no rank
    page = served_board_page([], [], "Board", datas={"medhorizon": release}, rows={}, verified={},
                             filters=Filters())
    assert 'id="empty-medhorizon"' in page and "No entries yet" in page
    table = re.search(r'<table class="board ref" id="ref-medhorizon">(.*?)</table>', page, re.S).group(1)
    shown = re.findall(r'<tr class="reported"><td data-label="Model">(.*?) <span class="mark rep">reported</span>'
                       r'.*?<td class="num" data-label="Reported %">(.*?)</td></tr>', table)
    assert shown == [(r["model"], r["reported"]) for r in rows]
    assert "Rank" not in table and "not run or verified here, and not ranked" in page


def test_a_board_on_other_data_says_why_it_has_no_paper_rows(synthetic):
    data = load_benchmark_data("medhorizon", synthetic.data_path)
    rows, problems = reference_rows("medhorizon", data)
    assert rows == [] and problems and "synthetic" in problems[0]
    page = served_board_page([], [], "Board", datas={"medhorizon": data}, rows={}, verified={}, filters=Filters())
    assert 'id="ref-none-medhorizon"' in page and "not its release" in page and 'id="ref-medhorizon"' not in page


def test_the_verified_mark_is_the_last_verify_or_unverify_in_the_action_log(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    a, _ = store.add(received=b"a", submission=None, benchmark="medhorizon", data_version="v", model="A",
                     kind="submission", filename=None, submitter=None)
    b, _ = store.add(received=b"b", submission=None, benchmark="medhorizon", data_version="v", model="B",
                     kind="submission", filename=None, submitter=None)
    assert store.verified() == {}
    store.act(a.id, "verify", "reproduced")
    store.act(b.id, "verify", "reproduced too")
    store.act(b.id, "unverify", "our rerun differs")
    store.act(a.id, "hide", "kept apart")  # another action does not clear the mark
    marks = store.verified()
    assert list(marks) == [a.id] and marks[a.id].reason == "reproduced"
    assert store.get(a.id).state == "hidden" and store.get(b.id).state == "public"  # a mark changes no state
    assert [x.action for x in store.actions(b.id)] == ["verify", "unverify"]
    with pytest.raises(ValueError, match="unknown action"):
        store.act(a.id, "approve", "no such action")
    store.close()


def test_a_maintainer_session_ends_with_its_time_its_token_or_a_change_to_it():
    now = [1_000_000.0]
    sessions = Sessions(clock=lambda: now[0])
    token = "t" * 32
    cookie = sessions.issue(token)
    assert token not in cookie and sessions.valid(cookie, token)
    assert not sessions.valid(cookie, "u" * 32)  # the token was rotated
    assert not sessions.valid(cookie[:-1] + ("0" if cookie[-1] != "0" else "1"), token)  # tampered
    assert not Sessions(clock=lambda: now[0]).valid(cookie, token)  # another process's key (a restart)
    csrf = sessions.csrf(cookie)
    assert sessions.csrf_valid(cookie, csrf) and not sessions.csrf_valid(sessions.issue(token), csrf)
    now[0] += SESSION_SECONDS + 1
    assert not sessions.valid(cookie, token)


def test_the_demo_build_and_serve_draw_one_default_number_of_resamples(monkeypatch, tmp_path):
    """Issue 45 item 7: the demo's board drew 1,000 resamples, `leaderboard build` and `serve` 2,000; the
    intervals of one run differed between the demo and a served board."""
    from types import SimpleNamespace

    import medhorizon_tasks.data.synthetic.surghi as surghi_synthetic
    import medhorizon_tasks.leaderboard as leaderboard
    import medhorizon_tasks.leaderboard.submission as submission
    from medhorizon_tasks.commands.jobs import demo
    from medhorizon_tasks.commands.main import build_parser
    from medhorizon_tasks.leaderboard.build import DEFAULT_N_RESAMPLES

    class Built(Exception):
        pass

    def build(paths, data, **kw):
        raise Built(kw)

    # the demo's board, up to the build: what it asks build_leaderboard for
    monkeypatch.setattr(surghi_synthetic, "build_surghi_sample",
                        lambda: SimpleNamespace(annotations_path=None, hierarchy_path=None))
    monkeypatch.setattr(leaderboard, "load_benchmark_data", lambda *a, **k: None)
    monkeypatch.setattr(leaderboard, "make_submission", lambda *a, **k: {})
    monkeypatch.setattr(submission, "write_submission", lambda sub, path: path)
    monkeypatch.setattr(leaderboard, "build_leaderboard", build)
    runs = {m: SimpleNamespace(samples={t: None for t in ("medhorizon_synthetic", "medhorizon_synthetic_oracle",
                                                            "medhorizon_synthetic_text", demo.SURGHI_TASK)})
            for m in ("medhorizon_needle", "medhorizon_random")}
    with pytest.raises(Built) as built:
        demo._leaderboard_section(runs, tmp_path / "data.jsonl", tmp_path, None)
    parser = build_parser()
    served = parser.parse_args(["leaderboard", "serve", "--synthetic"]).n_resamples
    made = parser.parse_args(["leaderboard", "build", "x.json", "--synthetic", "--out", "o"]).n_resamples
    assert built.value.args[0]["n_resamples"] == served == made == DEFAULT_N_RESAMPLES
    # and what the demo and the getting-started page say about it
    said = f"({DEFAULT_N_RESAMPLES:,} resamples"
    assert said in demo.LEADERBOARD_LEGEND[1]
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "getting-started.md").read_text().split())
    assert said in page and "1,000 resamples" not in page


def test_serves_synthetic_help_says_it_holds_every_benchmark(capsys):
    """`leaderboard serve --help` said `--synthetic` was "the embedded synthetic benchmark of --benchmark": serve
    has no --benchmark, and loads all three."""
    from medhorizon_tasks.commands.main import main

    with pytest.raises(SystemExit):
        main(["leaderboard", "serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--benchmark" not in text
    assert "--synthetic the embedded synthetic benchmarks of MedHorizon, Sureon and SurgHiBench" in text
