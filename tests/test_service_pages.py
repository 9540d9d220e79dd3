"""The served board's parts that need no server (issue 45 item 5): the paper's published rows as reference rows
on a board whose data are the paper's release (and why there are none on other data), the verified mark read
from the store's action log, and the maintainers' sessions (expiry, the token's rotation, tampering)."""

from __future__ import annotations

import re

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
