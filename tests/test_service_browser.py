"""The submission form of `leaderboard serve`, driven in a real headless browser: Chromium through Selenium and
Debian's chromium-driver (both at fixed paths, so Selenium Manager never downloads a driver), against a real
server (uvicorn on 127.0.0.1, SQLite in a temporary folder). One server and one browser for the module.

What a submitter meets: a valid upload lands on the board with the numbers `leaderboard build` makes of the same
files; a samples or predictions file with the form's fields is accepted; an invalid upload shows the lines
`leaderboard validate` prints and keeps nothing; a model name with markup is text; the entry page shows each
group's interval.

What a reader of a board expects of it: a search and filters that work (model, size, input protocol, verified
only), a plot per benchmark whose points are the board's numbers, an empty state where a benchmark has no entry,
the maintainers' HTML view (token login into an HttpOnly session cookie, verify / hide with a reason, the log)
whose "verified" mark shows on the board, the entry, the JSON and the CSV, styled error pages for a browser, and
every page readable in a 390 px window (nothing wider than the window, no table cut)."""

from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.leaderboard.submission import make_submission, write_submission
from medhorizon_tasks.leaderboard.tables import pct
from service_server import Server

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CLI = str(Path(sys.executable).with_name("medhorizon-tasks"))

# A name a submitter may type: markup that would run if it were ever put into a page as HTML.
MARKUP = """<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>&amp; <b>bold</b>"""


@pytest.fixture(scope="module")
def medhorizon(synthetic):
    """The embedded synthetic MedHorizon data, as the server loads it with --synthetic."""
    return load_benchmark_data("medhorizon", synthetic_paths("medhorizon")[0])


@pytest.fixture(scope="module")
def server(synthetic, tmp_path_factory):
    folder = tmp_path_factory.mktemp("service-browser")
    srv = Server(f"sqlite:///{folder / 'board.sqlite3'}", "--rate-limit", "10000/minute",
                 log=folder / "serve.log").start()
    # entry id -> the file uploaded. The first test builds every upload accepted so far (its own: it runs first;
    # the later tests upload samples files too, which build does not read)
    srv.accepted = {}
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000", f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(180)
    yield driver
    driver.quit()


# ------------------------------------------------------------------ helpers

def predictions(data, path: Path, accuracy: float, seed: int) -> tuple[Path, int]:
    """A plain predictions JSONL (what `score` reads): each item answered right with ``accuracy``; (path, right)."""
    rng = random.Random(seed)
    right, lines = 0, []
    for it in data.items:
        ok = rng.random() < accuracy
        right += ok
        letter = it.answer if ok else "ABCD"[("ABCD".index(it.answer) + 1 + rng.randrange(3)) % 4]
        lines.append(json.dumps({"uid": it.uid, "prediction": f"The answer is ({letter})."}))
    path.write_text("\n".join(lines) + "\n")
    return path, right


def click_and_load(browser, element, timeout: float = 180) -> None:
    """Click a form's button and wait until the browser has left the page and loaded the reply: ``click()``
    returns before a slow server answers (under load, the next ``find_element`` read the old page)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    old = browser.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(browser, timeout).until(EC.staleness_of(old))
    WebDriverWait(browser, timeout).until(lambda d: d.execute_script("return document.readyState") == "complete")


def upload(browser, srv, path: Path, **fields) -> str:
    """Fill the form (file and fields), send it, and return the URL the browser lands on."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(srv.url + "/submit")
    browser.find_element(By.ID, "file").send_keys(str(path))
    for name, value in fields.items():
        element = browser.find_element(By.ID, name)
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)
    form_url = browser.current_url
    browser.find_element(By.ID, "send").click()
    # the reply is an entry's page (accepted) or the form again with the problems (refused)
    WebDriverWait(browser, 180).until(
        lambda d: d.find_elements(By.ID, "banner") or d.find_elements(By.ID, "refused"))
    assert browser.current_url != form_url or browser.find_elements(By.ID, "refused")
    return browser.current_url


def accepted_id(browser, srv, path: Path, **fields) -> int:
    from selenium.webdriver.common.by import By

    url = upload(browser, srv, path, **fields)
    assert "/submissions/" in url and url.endswith("?accepted=1"), (url, browser.page_source[-3000:])
    assert browser.find_element(By.ID, "banner").text == "Accepted: this submission is on the board."
    sub_id = int(url.split("/submissions/")[1].split("?")[0])
    srv.accepted[sub_id] = path
    return sub_id


def api_board(srv) -> dict:
    r = httpx.get(srv.url + "/api/board", timeout=120)
    assert r.status_code == 200
    return r.json()


def api_entries(srv, bench: str = "medhorizon") -> list[dict]:
    return next((b["entries"] for b in api_board(srv)["boards"] if b["benchmark"] == bench), [])


def n_stored(srv) -> int:
    return httpx.get(srv.url + "/healthz", timeout=60).json()["submissions"]


def page_rows(browser, bench: str = "medhorizon") -> dict[str, dict]:
    """The rows of a board table of the page shown: {model: {"cells": [texts], "values": [data-value], "href"}}."""
    return browser.execute_script("""
        const out = {};
        const table = document.getElementById("board-" + arguments[0]);
        if (!table) return out;
        for (const tr of table.tBodies[0].rows) {
          const a = tr.cells[1].querySelector("a");
          out[tr.getAttribute("data-model")] = {
            cells: Array.from(tr.cells, c => c.innerText.trim()),
            values: Array.from(tr.cells, c => c.getAttribute("data-value")),
            href: a ? a.getAttribute("href") : null};
        }
        return out;""", bench)


def leaderboard_build(files: list[Path], out: Path) -> list[dict]:
    """`medhorizon-tasks leaderboard build` of ``files`` (a subprocess, as a user runs it): its CSV rows."""
    res = subprocess.run([CLI, "leaderboard", "build", *map(str, files), "--synthetic", "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    with open(out / "leaderboard.csv", newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["benchmark"] == "medhorizon"]


# ------------------------------------------------------------------ (a) a valid upload, on the board as build has it

def test_uploaded_submissions_are_on_the_board_with_the_numbers_of_leaderboard_build(server, browser, medhorizon,
                                                                                     tmp_path):
    # one submission made by the command a model developer runs, one by the function it calls
    made = tmp_path / "strong.json"
    res = subprocess.run([CLI, "leaderboard", "make", "--synthetic", "--benchmark", "medhorizon", "--predictions",
                          str(predictions(medhorizon, tmp_path / "strong.jsonl", 0.8, 1)[0]), "--model",
                          "Browser-Strong-7B", "--model-size", "7B", "--fps", "1", "--cap", "64",
                          "--date", "2026-11-30", "--out", str(made)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    weak = tmp_path / "weak.json"
    write_submission(make_submission(medhorizon, predictions(medhorizon, tmp_path / "weak.jsonl", 0.45, 2)[0],
                                     model="Browser-Weak-2B", size="2B", frames=16, date="2026-11-29"), weak)
    ids = {accepted_id(browser, server, p): p for p in (made, weak)}

    browser.get(server.url + "/")
    shown = page_rows(browser)
    served = {e["model"]: e for e in api_entries(server)}
    built = {r["model"]: r for r in leaderboard_build(list(server.accepted.values()), tmp_path / "built")}
    # the board holds what the store holds: every accepted upload of this module, and build ranks the same set
    assert set(shown) == set(served) == set(built) and len(built) == len(server.accepted)
    for model, row in built.items():
        e, cells = served[model], shown[model]["cells"]
        assert e["rank"] == int(row["rank"]) == int(cells[0]), model
        assert round(e["value"], 6) == pytest.approx(float(row["value"]), abs=1e-12)
        assert [round(x, 6) for x in e["ci95"]] == pytest.approx([float(row["ci95_low"]), float(row["ci95_high"])],
                                                                 abs=1e-12)
        assert e["n"] == int(row["n"]) == len(medhorizon.items)
        holm = e["p_vs_leader_holm"]
        assert (holm is None and row["p_vs_leader_holm"] == "") or float(f"{holm:.4g}") == float(
            row["p_vs_leader_holm"])
        assert float(shown[model]["values"][5]) == pytest.approx(e["value"], rel=1e-9)
        assert cells[5] == f"{pct(e['value'])} [{pct(e['ci95'][0])}, {pct(e['ci95'][1])}]"
    # the served page's rows read as the built page's rows, cell for cell (the model's link aside)
    browser.get((tmp_path / "built" / "leaderboard.html").as_uri())
    for model, row in page_rows(browser).items():
        # the served board adds one column after build's: the date the entry was received
        assert row["cells"] == shown[model]["cells"][:-1], model
        assert shown[model]["cells"][-1] == served[model]["received_at"][:10], model
    # each new entry's name opens its page
    for sub_id, path in ids.items():
        model = json.loads(path.read_text())["metadata"]["model"]
        assert shown[model]["href"] == f"/submissions/{sub_id}"


# ------------------------------------------------------------------ (b) samples / predictions with the form's fields

def test_samples_and_predictions_files_with_the_form_fields_are_accepted(server, browser, medhorizon, tmp_path):
    from selenium.webdriver.common.by import By

    plain, right = predictions(medhorizon, tmp_path / "run_predictions.jsonl", 0.6, 3)
    # lmms-eval --log_samples lines: the raw response and the item's uid; item 5 answered wrong on purpose
    samples = tmp_path / "20261130_samples_medhorizon_synthetic.jsonl"
    samples.write_text("".join(json.dumps({
        "doc_id": i, "target": it.answer,
        "filtered_resps": [f"I think the answer is {it.answer if i != 5 else 'ABCD'['ABCD'.index(it.answer) - 1]}"],
        "accuracy": {"uid": it.uid}}) + "\n" for i, it in enumerate(medhorizon.items)))
    n = len(medhorizon.items)
    for path, model, extra, value in [
            (plain, "Form-Plain-3B", {"fps": "2", "cap": "32"}, right / n),
            (samples, "Form-Samples-1B", {"frames": "8", "notes": "lmms-eval run", "url": "https://example.org/m"},
             (n - 1) / n)]:
        before = n_stored(server)
        sub_id = accepted_id(browser, server, path, benchmark="medhorizon", model=model, size="1B",
                             date="2026-11-28", **extra)
        assert n_stored(server) == before + 1
        meta = {r.find_element(By.TAG_NAME, "th").text: r.find_element(By.TAG_NAME, "td").text
                for r in browser.find_elements(By.CSS_SELECTOR, "#meta tr")}
        assert meta["Model"] == model and meta["Size"] == "1B" and meta["Date"] == "2026-11-28"
        assert meta["Uploaded as"] == f"samples ({path.name})"
        assert meta["Input protocol"] == ("2 fps, cap 32" if "fps" in extra else "8 frames")
        entry = httpx.get(f"{server.url}/api/submissions/{sub_id}", timeout=60).json()
        assert entry["scores"]["value"] == pytest.approx(value) and entry["scores"]["n"] == n
        assert entry["metadata"]["date"] == "2026-11-28"
        if path is samples:
            assert entry["metadata"]["notes"] == "lmms-eval run" and entry["metadata"]["url"] == "https://example.org/m"
            assert meta["URL"] == "https://example.org/m"
        # and it is on the board at once
        assert any(e["id"] == sub_id and e["model"] == model for e in api_entries(server))


# ------------------------------------------------------------------ (c) an invalid upload: its problems, nothing kept

def test_an_invalid_upload_shows_the_problems_validate_lists_and_keeps_nothing(server, browser, medhorizon,
                                                                              tmp_path):
    from selenium.webdriver.common.by import By

    sub = make_submission(medhorizon, predictions(medhorizon, tmp_path / "p.jsonl", 0.5, 4)[0], model="Broken",
                          size="7B", fps=1, cap=64)
    sub["metadata"]["date"] = "yesterday"
    del sub["metadata"]["size"]
    sub["predictions"] = sub["predictions"][1:] + [sub["predictions"][4], {"id": "x9", "output": "B"}]
    bad = tmp_path / "broken.json"
    write_submission(sub, bad)
    res = subprocess.run([CLI, "leaderboard", "validate", str(bad), "--synthetic"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 1
    expected = [line[4:] for line in res.stderr.splitlines() if line.startswith("  - ")]
    assert len(expected) == 5, res.stderr

    board_before, stored_before = api_board(server), n_stored(server)
    browser.get(server.url + "/")
    page_before = page_rows(browser)

    url = upload(browser, server, bad)
    assert url.endswith("/submit")
    refused = browser.find_element(By.ID, "refused")
    assert refused.find_element(By.TAG_NAME, "strong").text == f"Refused: {len(expected)} problem(s); nothing was kept."
    assert [li.text for li in refused.find_elements(By.CSS_SELECTOR, "ul.problems li")] == expected
    # the form is there again, ready for the next try
    assert browser.find_element(By.ID, "file") and browser.find_element(By.ID, "send")

    assert n_stored(server) == stored_before
    assert api_board(server) == board_before
    browser.get(server.url + "/")
    assert page_rows(browser) == page_before
    assert "Broken" not in page_before


# ------------------------------------------------------------------ (d) markup in a model name is text

def test_a_model_name_with_markup_is_shown_as_text(server, browser, medhorizon, tmp_path):
    from selenium.webdriver.common.by import By

    plain, _ = predictions(medhorizon, tmp_path / "xss.jsonl", 0.3, 5)
    browser.get(server.url + "/")
    board_title = browser.title
    sub_id = accepted_id(browser, server, plain, benchmark="medhorizon", model=MARKUP, size="7B", notes=MARKUP,
                         fps="1", cap="64")

    def no_markup_ran(page_scripts: int, title: str):
        assert browser.find_elements(By.TAG_NAME, "img") == []
        assert len(browser.find_elements(By.TAG_NAME, "script")) == page_scripts  # the page's own only
        assert browser.find_elements(By.TAG_NAME, "b") == []
        assert browser.title == title  # no onerror nor script set it

    # the entry's page: the name is the literal text, in the title, the heading and the table
    assert browser.find_element(By.TAG_NAME, "h1").text == f"{MARKUP} on MedHorizon"
    meta = {r.find_element(By.TAG_NAME, "th").text: r.find_element(By.TAG_NAME, "td")
            for r in browser.find_elements(By.CSS_SELECTOR, "#meta tr")}
    assert meta["Model"].text == MARKUP and meta["Notes"].text == MARKUP
    no_markup_ran(0, f"{MARKUP} on MedHorizon")

    # the board: the name is the text of the link to the entry's page, the notes only a tooltip
    browser.get(server.url + "/")
    rows = page_rows(browser)
    assert rows[MARKUP]["cells"][1] == MARKUP and rows[MARKUP]["href"] == f"/submissions/{sub_id}"
    cell = browser.execute_script("""return Array.from(document.querySelectorAll("#board-medhorizon tbody tr"))
        .find(tr => tr.getAttribute("data-model") === arguments[0]).cells[1];""", MARKUP)
    assert cell.get_attribute("title") == MARKUP
    assert [a.get_attribute("href") for a in cell.find_elements(By.TAG_NAME, "a")] == [
        f"{server.url}/submissions/{sub_id}"]
    no_markup_ran(1, board_title)


# ------------------------------------------------------------------ (e) the entry page's per-group intervals

def test_the_entry_page_shows_each_groups_interval(server, browser, medhorizon, tmp_path):
    from selenium.webdriver.common.by import By

    plain, _ = predictions(medhorizon, tmp_path / "groups.jsonl", 0.7, 6)
    sub_id = accepted_id(browser, server, plain, benchmark="medhorizon", model="Grouped-4B", size="4B", fps="1",
                         cap="64")
    groups = httpx.get(f"{server.url}/api/submissions/{sub_id}", timeout=60).json()["groups"]
    assert [g["name"] for g in groups] == ["Family", "Task", "Source"]
    tables = browser.find_elements(By.CSS_SELECTOR, "table.board")
    assert len(tables) == len(groups)
    for g, table in zip(groups, tables):
        assert [th.text for th in table.find_elements(By.TAG_NAME, "th")] == [g["name"], "%", "95% CI", g["unit"]]
        shown = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                 for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert shown == [[str(r["label"]), pct(r["value"]), f"[{pct(r['ci95'][0])}, {pct(r['ci95'][1])}]", str(r["n"])]
                         for r in g["rows"]]
        for r in g["rows"]:
            assert r["ci95"][0] <= r["value"] <= r["ci95"][1]
    # the tasks' items add up to the data's
    task = next(g for g in groups if g["name"] == "Task")
    assert sum(r["n"] for r in task["rows"]) == len(medhorizon.items)
    assert len(task["rows"]) == len({it.task for it in medhorizon.items})


# ------------------------------------------------------------------ (f) search and filters, empty states

def api_submit(srv, data, path: Path, **meta) -> int:
    """An upload through the API (cheaper than the form, which the tests above drive): the new entry's id."""
    r = httpx.post(srv.url + "/api/submissions", content=json.dumps(make_submission(data, path, **meta)).encode(),
                   headers={"content-type": "application/json"}, timeout=300)
    assert r.status_code == 201, r.text
    return r.json()["id"]


@pytest.fixture(scope="module")
def caps(server, medhorizon, tmp_path_factory):
    """One model at three frame caps (the plot's second panel) and another of another size: {cap: id}."""
    folder = tmp_path_factory.mktemp("caps")
    out = {cap: api_submit(server, medhorizon, predictions(medhorizon, folder / f"c{cap}.jsonl", acc, 20 + cap)[0],
                           model="Capped-Sweep-8B", size="8B", fps=1, cap=cap)
           for cap, acc in ((16, 0.35), (64, 0.55), (256, 0.75))}
    out["other"] = api_submit(server, medhorizon, predictions(medhorizon, folder / "o.jsonl", 0.5, 99)[0],
                              model="Lone-Frames-13B", size="13B", frames=12)
    return out


def test_search_and_filters_narrow_the_board_and_keep_its_ranks(server, browser, caps):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    entries = {e["id"]: e for e in api_entries(server)}
    browser.get(server.url + "/")
    assert len(page_rows(browser)) == len({e["model"] for e in entries.values()})
    # a benchmark the server holds with no entry yet says so, and why it has no paper rows (synthetic data)
    for bench in ("sureon", "surghi"):
        assert "No entries yet" in browser.find_element(By.ID, f"empty-{bench}").text
        assert "not its release" in browser.find_element(By.ID, f"ref-none-{bench}").text
    assert "embedded synthetic benchmark" in browser.find_element(By.ID, "ref-none-medhorizon").text

    box = browser.find_element(By.ID, "q")
    box.send_keys("capped-SWEEP")
    click_and_load(browser, browser.find_element(By.ID, "search"))
    assert "q=capped-SWEEP" in browser.current_url
    rows = browser.execute_script("""return Array.from(document.querySelectorAll("#board-medhorizon tbody tr"),
        tr => [tr.getAttribute("data-model"), tr.cells[0].innerText.trim(), tr.cells[3].innerText.trim()]);""")
    want = sorted(([e["model"], str(e["rank"]), e["input_protocol_text"]] for e in entries.values()
                   if e["model"] == "Capped-Sweep-8B"), key=lambda r: int(r[1]))
    assert len(want) == 3 and rows == want  # the ranks of the whole board, not renumbered
    total = len(entries)
    assert browser.find_element(By.ID, "shown").text.startswith(f"Showing 3 of {total} entries")
    # the search box keeps what was typed; a protocol filter narrows further
    assert browser.find_element(By.ID, "q").get_attribute("value") == "capped-SWEEP"
    Select(browser.find_element(By.ID, "protocol")).select_by_value("1 fps, cap 64")
    click_and_load(browser, browser.find_element(By.ID, "search"))
    assert list(page_rows(browser)) == ["Capped-Sweep-8B"]
    assert page_rows(browser)["Capped-Sweep-8B"]["href"] == f"/submissions/{caps[64]}"
    # by size alone
    browser.get(server.url + "/")
    Select(browser.find_element(By.ID, "size")).select_by_value("13B")
    click_and_load(browser, browser.find_element(By.ID, "search"))
    assert list(page_rows(browser)) == ["Lone-Frames-13B"]
    # nothing matches: the board says so instead of showing an empty table
    browser.get(server.url + "/?q=no-such-model-anywhere")
    assert page_rows(browser) == {}
    assert "No entry matches the search" in browser.find_element(By.ID, "empty-medhorizon").text


# ------------------------------------------------------------------ (g) the plot

def test_the_plot_shows_each_entrys_score_and_interval_and_score_against_frames(server, browser, caps):
    from selenium.webdriver.common.by import By

    board = next(b for b in api_board(server)["boards"] if b["benchmark"] == "medhorizon")
    browser.get(server.url + "/")
    svg = browser.find_element(By.ID, "plot-medhorizon")
    # drawn (inline SVG under the page's CSP), and as wide as its box at most
    box = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height];", svg)
    assert box[0] > 300 and box[1] > 100
    dots = svg.find_elements(By.CSS_SELECTOR, "circle.score")
    assert sorted(float(d.get_attribute("data-value")) for d in dots) == pytest.approx(
        sorted(e["value"] for e in board["entries"]), rel=1e-5)
    # one interval bar per entry, from its low to its high end: bar length ~ interval width
    bars = svg.find_elements(By.CSS_SELECTOR, "line.ci")
    assert len(bars) == len(board["entries"])
    widths = sorted(float(b.get_attribute("x2")) - float(b.get_attribute("x1")) for b in bars)
    scale = widths[-1] / max(e["ci95"][1] - e["ci95"][0] for e in board["entries"])
    assert widths == pytest.approx(sorted((e["ci95"][1] - e["ci95"][0]) * scale for e in board["entries"]), abs=0.2)
    # the second panel: the model sent at three caps is one line of three points, rising with its scores
    series = svg.find_elements(By.CSS_SELECTOR, "polyline.series")
    assert [s.get_attribute("data-model") for s in series] == ["Capped-Sweep-8B"]
    points = [tuple(map(float, p.split(","))) for p in series[0].get_attribute("points").split()]
    assert len(points) == 3 and points[0][0] < points[1][0] < points[2][0]
    by_cap = {e["input_protocol"]["cap"]: e["value"] for e in board["entries"] if e["model"] == "Capped-Sweep-8B"}
    order = sorted(by_cap, key=by_cap.get)
    ys = {cap: y for cap, (_, y) in zip(sorted(by_cap), points)}
    assert sorted(ys, key=ys.get, reverse=True) == order  # higher score = higher on the page (smaller y)


# ------------------------------------------------------------------ (h) the maintainers' view

def test_the_maintainer_view_logs_in_with_the_token_and_verifies_with_a_reason(server, browser, caps):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from service_server import MAINTAINER_TOKEN

    browser.get(server.url + "/maintainer")
    browser.find_element(By.ID, "token").send_keys("wrong-" + MAINTAINER_TOKEN)
    click_and_load(browser, browser.find_element(By.ID, "login"))
    assert browser.find_element(By.ID, "refused").text == "wrong maintainer token"
    assert browser.find_elements(By.ID, "entries") == []
    browser.find_element(By.ID, "token").send_keys(MAINTAINER_TOKEN)
    click_and_load(browser, browser.find_element(By.ID, "login"))
    assert browser.find_element(By.ID, "entries")
    # the session cookie: HttpOnly (no script reads it), SameSite=Strict, and not the token
    cookie = browser.get_cookie("mh_maintainer")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and MAINTAINER_TOKEN not in cookie["value"]
    assert "mh_maintainer" not in browser.execute_script("return document.cookie")

    def act(sub_id: int, action: str, reason: str):
        form = browser.find_element(By.ID, f"act-{sub_id}")
        Select(form.find_element(By.NAME, "action")).select_by_value(action)
        form.find_element(By.NAME, "reason").send_keys(reason)
        click_and_load(browser, form.find_element(By.TAG_NAME, "button"))

    # no reason: refused, nothing done
    act(caps[256], "verify", "")
    assert "give the reason" in browser.find_element(By.ID, "refused").text
    act(caps[256], "verify", "re-ran on our GPUs: 75.0 again")
    assert browser.find_element(By.ID, "banner").text == f"verify: entry {caps[256]} (Capped-Sweep-8B)"
    assert browser.find_element(By.CSS_SELECTOR, f"#row-{caps[256]} td.verified").text == "yes"
    act(caps["other"], "hide", "a duplicate of another run")
    assert browser.find_element(By.CSS_SELECTOR, f"#row-{caps['other']} td.state").text == "hidden"
    log = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")][1:]
           for tr in browser.find_elements(By.CSS_SELECTOR, "#log tbody tr")]
    assert log[:2] == [[str(caps["other"]), "Lone-Frames-13B", "hide", "a duplicate of another run"],
                       [str(caps[256]), "Capped-Sweep-8B", "verify", "re-ran on our GPUs: 75.0 again"]]
    api_log = httpx.get(server.url + "/api/actions", headers={"Authorization": f"Bearer {MAINTAINER_TOKEN}"},
                        timeout=60).json()["actions"]
    assert [(a["submission_id"], a["action"]) for a in api_log[-2:]] == [(caps[256], "verify"), (caps["other"], "hide")]

    # the mark: on the board (beside the name, and in the "verified only" filter), the entry, the JSON, the CSV
    browser.get(server.url + "/?verified=1")
    rows = page_rows(browser)
    assert list(rows) == ["Capped-Sweep-8B"] and rows["Capped-Sweep-8B"]["href"] == f"/submissions/{caps[256]}"
    assert rows["Capped-Sweep-8B"]["cells"][1] == "Capped-Sweep-8B verified"
    browser.get(server.url + "/")
    assert "Lone-Frames-13B" not in page_rows(browser)  # hidden
    browser.get(f"{server.url}/submissions/{caps[256]}")
    assert browser.find_element(By.ID, "verified").text == "verified"
    marks = {e["id"]: e["verified"] for e in api_entries(server)}
    assert marks[caps[256]] is True and not any(v for k, v in marks.items() if k != caps[256])
    served_csv = list(csv.DictReader(httpx.get(server.url + "/board.csv", timeout=60).text.splitlines()))
    assert {r["submission"]: r["verified"] for r in served_csv if r["verified"] == "yes"} == {
        f"/submissions/{caps[256]}": "yes"}

    # a form posted with the session cookie but without the page's CSRF token (another site's form) is refused
    forged = httpx.post(server.url + "/maintainer/act", cookies={"mh_maintainer": cookie["value"]}, timeout=60,
                        data={"id": str(caps[256]), "action": "unverify", "reason": "forged", "csrf": "0" * 64})
    assert forged.status_code == 403 and "security token" in forged.text
    assert {e["id"]: e["verified"] for e in api_entries(server)}[caps[256]] is True
    # logging out ends the session
    browser.get(server.url + "/maintainer")
    click_and_load(browser, browser.find_element(By.ID, "logout"))
    assert browser.find_element(By.ID, "token") and browser.get_cookie("mh_maintainer") is None


# ------------------------------------------------------------------ (i) error pages, and a 390 px phone

def test_error_pages_are_styled_for_a_browser_and_json_for_a_client(server, browser):
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/no/such/page")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not found"
    assert browser.find_element(By.ID, "error").text == "There is no page at /no/such/page."
    browser.get(server.url + "/submissions/not-a-number")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not understood"
    assert "sub_id" in browser.find_element(By.ID, "error").text
    html = {"Accept": "text/html"}
    r = httpx.delete(server.url + "/", headers=html, timeout=30)
    assert r.status_code == 405 and "<h1>Method not allowed</h1>" in r.text and r.headers["allow"] == "GET"
    assert "content-security-policy" in r.headers
    # an API client gets FastAPI's JSON
    assert httpx.get(server.url + "/no/such/page", timeout=30).json() == {"detail": "Not Found"}
    assert httpx.get(server.url + "/api/submissions/x", headers=html, timeout=30).json()["detail"][0]["loc"] == [
        "path", "sub_id"]


def test_every_page_is_readable_in_a_390_px_window(server, browser, caps):
    pages = ["/", "/?q=capped", "/submit", f"/submissions/{caps[64]}", "/maintainer", "/no/such/page"]
    browser.set_window_size(390, 844)
    try:
        width = browser.execute_script("return window.innerWidth")
        assert 360 <= width <= 390
        for path in pages:
            browser.get(server.url + path)
            cut = browser.execute_script("""
                const out = [];
                if (document.documentElement.scrollWidth > window.innerWidth)
                  out.push("page " + document.documentElement.scrollWidth);
                for (const t of document.querySelectorAll("table, svg, form, pre"))
                  if (t.getBoundingClientRect().right > window.innerWidth + 0.5)
                    out.push(t.tagName + "#" + t.id + " " + t.getBoundingClientRect().right);
                for (const w of document.querySelectorAll(".wrap"))
                  if (w.scrollWidth > w.clientWidth) out.push("wrap " + w.scrollWidth + ">" + w.clientWidth);
                return out;""")
            assert cut == [], (path, cut)
        # on the board each row is a card of "label value" lines, all of them there
        browser.get(server.url + "/")
        card = browser.execute_script("""const tr = document.querySelector("#board-medhorizon tbody tr");
            return [getComputedStyle(tr).display, Array.from(tr.cells, c => c.getAttribute("data-label"))];""")
        assert card[0] == "block" and card[1][:2] == ["Rank", "Model"] and card[1][-1] == "Received"
    finally:
        browser.set_window_size(1400, 1000)
