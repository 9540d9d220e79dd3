"""The leaderboard page opens in a real headless browser (Chromium) and shows the tables.

Chromium is a test requirement, not an optional extra: without it this test
fails and says how to install it (Debian / Ubuntu: ``apt-get install -y
chromium``). It is never skipped.
"""

import html
import json
import re
import shutil
import subprocess

import pytest

from medhorizon_tasks.benchmarks import data as D
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.leaderboard import build as B
from medhorizon_tasks.leaderboard import publish as P
from medhorizon_tasks.leaderboard import submission as S
from medhorizon_tasks.leaderboard import tables as T
from test_leaderboard import (
    HIERARCHY,
    mcq_submission,
    random_ish,
    release_records,
    sureon_records,
    surghi_rows,
    surghi_submission,
    write_jsonl,
    wrong_labels,
)

INSTALL = "apt-get install -y chromium  (Debian/Ubuntu; the package is chromium-browser on some Ubuntu releases)"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(f"headless Chromium is needed to test the leaderboard page and none was found on PATH; "
                f"install it with: {INSTALL}")


def _chromium_cmd(profile, *args) -> list[str]:
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-extensions", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={profile}", *args]


def dump_dom(page, profile, *args) -> str:
    """The DOM after the page loaded (scripts run), as Chromium serialises it."""
    proc = subprocess.run(_chromium_cmd(profile, *args, "--dump-dom", page.resolve().as_uri()), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


# Written into a copy of the page: after layout, the widths that decide whether a table scrolls sideways.
MEASURE = """<script>window.addEventListener("load", function () {
  var out = {viewport: window.innerWidth, page: document.documentElement.scrollWidth, tables: []};
  document.querySelectorAll("table.board").forEach(function (t) {
    var box = t.parentElement;
    out.tables.push({id: t.id, box_scroll: box.scrollWidth, box_client: box.clientWidth, table: t.scrollWidth,
                     right: t.getBoundingClientRect().right});
  });
  document.body.setAttribute("data-measure", JSON.stringify(out));
});</script>"""


def measure(page, profile, width: int, height: int = 900) -> dict:
    probe = page.with_name(f"measure-{width}.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = dump_dom(probe, profile, f"--window-size={width},{height}", "--virtual-time-budget=5000")
    found = re.search(r'data-measure="([^"]*)"', dom)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def screenshot(page, profile, out, width: int, height: int):
    proc = subprocess.run(_chromium_cmd(profile, f"--window-size={width},{height}", f"--screenshot={out}",
                                        page.resolve().as_uri()), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and out.exists(), f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return out


def test_leaderboard_page_opens_in_headless_chromium(tmp_path):
    (tmp_path / "hierarchy.json").write_text(json.dumps(HIERARCHY))
    mh = D.load_benchmark_data("medhorizon", write_jsonl(tmp_path / "release.jsonl", release_records()))
    g = D.load_benchmark_data("surghi", write_jsonl(tmp_path / "surghi.jsonl", surghi_rows()),
                              hierarchy=tmp_path / "hierarchy.json")
    subs = [mcq_submission(mh, "Perfect-VL", lambda i: True, url="https://example.org/model?a=1&b=2"),
            mcq_submission(mh, "Half-VL", lambda i: i % 2 == 0, notes="half right"),
            mcq_submission(mh, "Evil <script>document.title='pwned'</script>", random_ish(1)),
            surghi_submission(g, "Hier-CLIP", lambda i, r: (r.phase, r.step)),
            surghi_submission(g, "Flat-CLIP", lambda i, r: wrong_labels(r) if i % 3 == 0 else (r.phase, r.step))]
    boards = B.build_leaderboard(subs, {"medhorizon": mh, "surghi": g}, n_resamples=100)
    paths = P.write_leaderboard(boards, tmp_path / "board", title="MedHorizon-tasks test board")
    page = paths["html"]
    source = page.read_text()

    # Self-contained: no fetched resources, and the tables are in the HTML itself (not built by script).
    assert not re.search(r"""(src|href)=["']?(https?:)?//(?!example\.org)""", source)
    assert "<link" not in source and "@import" not in source
    assert source.count("<tr") == 1 + 3 + 1 + 2  # header + rows of each table
    assert "Perfect-VL" in source and "Hier-CLIP" in source

    dom = dump_dom(page, tmp_path / "profile")
    assert "<title>MedHorizon-tasks test board</title>" in dom  # the injected script did not run
    tables = re.findall(r'<table class="board" id="board-(\w+)">(.*?)</table>', dom, re.S)
    assert [name for name, _ in tables] == ["medhorizon", "surghi"]
    rows = {name: re.findall(r"<tr[^>]*data-model=\"([^\"]*)\"[^>]*>(.*?)</tr>", body, re.S) for name, body in tables}

    def cells(row_html):
        return [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.S)]

    mh_rows = [(html.unescape(m), cells(r)) for m, r in rows["medhorizon"]]
    assert [m for m, _ in mh_rows] == ["Perfect-VL", "Half-VL", "Evil <script>document.title='pwned'</script>"]
    perfect, half, evil = (c for _, c in mh_rows)
    assert perfect[:3] == ["1", "Perfect-VL", "7B"] and perfect[5].startswith("100.0 [100.0, 100.0], Wilson [9")
    assert perfect[7] == "— (leader)"
    e = boards[0].entries[1]
    assert half[5] == f"50.0 [{100 * e.ci[0]:.1f}, {100 * e.ci[1]:.1f}]" and half[6] == "52 items"
    assert half[7].startswith("yes (p")
    assert evil[0] == "3" and evil[1] == "Evil <script>document.title='pwned'</script>"  # shown as text
    assert 'href="https://example.org/model?a=1&amp;b=2"' in dom and 'title="half right"' in dom

    sg = [(html.unescape(m), cells(r)) for m, r in rows["surghi"]]
    assert [m for m, _ in sg] == ["Hier-CLIP", "Flat-CLIP"]
    flat = boards[1].entries[1]
    assert sg[0][1][5] == "100.0 [100.0, 100.0]" and sg[1][1][5].startswith(f"{100 * flat.headline:.1f} [")
    assert sg[1][1][6] == "8 videos"
    assert f"Data version {g.version}" in dom and f"Data version {mh.version}" in dom


def test_chromium_is_documented_for_a_missing_binary(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y chromium"):
        chromium()


def test_page_and_markdown_link_the_same_urls_and_only_http(tmp_path):
    from medhorizon_tasks.leaderboard.html import render_html

    mh = D.load_benchmark_data("medhorizon", write_jsonl(tmp_path / "release.jsonl", release_records()))
    urls = ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "//evil.example/x",
            "https:///no-host", "HTTPS://ok.example/a?b=1&c=2", "http://ok.example/\"><img src=x>"]
    subs = [mcq_submission(mh, f"model {k}", random_ish(k)) for k in range(len(urls))]
    boards = B.build_leaderboard(subs, {"medhorizon": mh}, n_resamples=10)
    for e in boards[0].entries:  # urls validation would refuse, as a board built from other values may carry
        e.metadata["url"] = urls[int(e.metadata["model"].split()[1])]
    page = render_html(boards)
    hrefs = [html.unescape(h) for h in re.findall(r'<a href="([^"]*)">', page)]
    assert sorted(hrefs) == ["HTTPS://ok.example/a?b=1&c=2", "http://ok.example/\"><img src=x>"]
    assert "<img" not in page and "<script>alert" not in page
    md_links = re.findall(r"(?<!\\)\]\(([^)\s]*)\)", T.format_markdown(boards))
    assert sorted(md_links) == ["HTTPS://ok.example/a?b=1&c=2", "http://ok.example/%22%3E%3Cimg%20src=x%3E"]


# ------------------------------------------------------------------ layout at 1,400 px, and the title

# Four SurgHiBench datasets (the real benchmark has three) give the widest table: 8 fixed + 9 metric columns.
_BASE = {"toyC-with-a-longer-dataset-name": "toyA", "toyD": "toyB"}
WIDE_HIERARCHY = {**HIERARCHY, **{name: HIERARCHY[base] for name, base in _BASE.items()}}


def wide_surghi_rows():
    rows = surghi_rows()
    return rows + [{**r, "dataset": name} for name, base in _BASE.items() for r in rows if r["dataset"] == base]


def wide_wrong(i, r):
    """(phase, step) right for most frames, a valid wrong pair every third frame."""
    if i % 3:
        return r.phase, r.step
    phases = WIDE_HIERARCHY[r.dataset]["phases"]
    other = next(p for p in phases if p != r.phase)
    return other, phases[other][-1]


LONG_NAME = "Qwen2.5-VL-72B-Instruct-AWQ-int4-with-a-very-long-checkpoint-name-and-no-spaces-at-all-v2.1"
LONG_NOTES = "1 fps over the whole video, cap 768 frames, max side 448 px, greedy decoding; " * 4


@pytest.fixture()
def wide_boards(tmp_path):
    """Submission files and data for a page with all three benchmarks, long names and notes."""
    (tmp_path / "hierarchy.json").write_text(json.dumps(WIDE_HIERARCHY))
    files = {"medhorizon": write_jsonl(tmp_path / "release.jsonl", release_records()),
             "sureon": write_jsonl(tmp_path / "sureon.jsonl", sureon_records()),
             "surghi": write_jsonl(tmp_path / "surghi.jsonl", wide_surghi_rows())}
    mh = D.load_benchmark_data("medhorizon", files["medhorizon"])
    so = D.load_benchmark_data("sureon", files["sureon"])
    sg = D.load_benchmark_data("surghi", files["surghi"], hierarchy=tmp_path / "hierarchy.json")
    subs = {"mh_a": mcq_submission(mh, LONG_NAME, lambda i: True, url="https://example.org/m", notes=LONG_NOTES),
            "mh_b": mcq_submission(mh, "InternVL3-78B (8-bit, 1 fps, cap 256)", lambda i: i % 2 == 0,
                                   notes=LONG_NOTES),
            "mh_c": mcq_submission(mh, "Random", random_ish(3)),
            "so_a": mcq_submission(so, LONG_NAME, lambda i: True),
            "so_b": mcq_submission(so, "Blind baseline", random_ish(4, p=1 / 7), mode="blind",
                                   input_protocol={"fps": None, "cap": None, "frames": 0}),
            "sg_a": surghi_submission(sg, LONG_NAME, lambda i, r: (r.phase, r.step)),
            "sg_b": surghi_submission(sg, "Flat-CLIP-ViT-L/14@336px", wide_wrong)}
    paths = [S.write_submission(sub, tmp_path / f"{name}.json") for name, sub in subs.items()]
    data = ["--data", f"medhorizon={files['medhorizon']}", "--data", f"sureon={files['sureon']}", "--data",
            f"surghi={files['surghi']}", "--hierarchy", str(tmp_path / "hierarchy.json"), "--n-resamples", "50"]
    return paths, data


def test_page_fits_1400_px_and_carries_its_title(tmp_path, wide_boards, capsys):
    paths, data = wide_boards
    title = "Surgical video models <2026> & friends"
    assert main(["leaderboard", "build", *map(str, paths), *data, "--out", str(tmp_path / "board"),
                 "--title", title]) == 0
    page = tmp_path / "board" / "leaderboard.html"
    dom = dump_dom(page, tmp_path / "profile", "--window-size=1400,900").replace("<wbr>", "")  # break points
    shown = html.escape(title, quote=False)
    assert f"<title>{shown}</title>" in dom and re.search(rf"<h1>{re.escape(shown)}</h1>", dom)
    assert LONG_NAME in dom and len(re.findall(r'<table class="board"', dom)) == 3
    # one header cell (each row's cells name it too, in data-label: the label of a row's card below 640 px)
    assert dom.count(">toyC-with-a-longer-dataset-name multi-level<") == 1
    assert dom.count('data-label="toyC-with-a-longer-dataset-name multi-level"') == 2

    for width in (1400, 1000):  # a laptop, and a narrower window still above the ~900 px scrolling limit
        m = measure(page, tmp_path / "profile", width)
        assert m["viewport"] == width
        assert m["page"] <= width, f"the page scrolls sideways at {width} px: {m}"
        assert [t["id"] for t in m["tables"]] == ["board-medhorizon", "board-sureon", "board-surghi"]
        for t in m["tables"]:
            assert t["box_scroll"] <= t["box_client"] and t["table"] <= t["box_client"], f"{width} px: {t}"
            assert t["right"] <= width, f"{width} px: {t}"
    narrow = measure(page, tmp_path / "profile", 700)  # last resort: the table scrolls in its box, not the page
    assert narrow["page"] <= 700 and any(t["box_scroll"] > t["box_client"] for t in narrow["tables"])

    shot = screenshot(page, tmp_path / "profile", tmp_path / "board-1400.png", 1400, 900)
    import matplotlib.image as mpimg

    assert mpimg.imread(str(shot)).shape[:2] == (900, 1400)


def test_default_title_names_the_benchmarks(tmp_path, wide_boards, capsys):
    paths, data = wide_boards
    assert main(["leaderboard", "build", *map(str, paths[:3]), *data, "--out", str(tmp_path / "one")]) == 0
    page = (tmp_path / "one" / "leaderboard.html").read_text()
    assert "<title>MedHorizon leaderboard</title>" in page and "<h1>MedHorizon leaderboard</h1>" in page
    assert main(["leaderboard", "build", *map(str, paths), *data, "--out", str(tmp_path / "all")]) == 0
    page = (tmp_path / "all" / "leaderboard.html").read_text()
    assert "<title>MedHorizon, Sureon and SurgHiBench leaderboards</title>" in page
    capsys.readouterr()

    from medhorizon_tasks.leaderboard.html import default_title, render_html

    mh = D.load_benchmark_data("medhorizon", write_jsonl(tmp_path / "release.jsonl", release_records()))
    boards = B.build_leaderboard([mcq_submission(mh, "A", lambda i: True)], {"medhorizon": mh}, n_resamples=10)
    assert default_title(boards) == "MedHorizon leaderboard"
    assert "<h1>MedHorizon leaderboard</h1>" in render_html(boards)
    assert "<h1>My board</h1>" in render_html(boards, title="My board")


# Written into a copy of the page: every run of non-space text (between break opportunities) that the layout
# put on more than one line, in a table cell or header.
BROKEN_WORDS = """<script>window.addEventListener("load", function () {
  var broken = [];
  document.querySelectorAll("table.board td, table.board th").forEach(function (cell) {
    var walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      var re = /\\S+/g, m;
      while ((m = re.exec(node.data))) {
        var r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        var tops = {};
        Array.prototype.forEach.call(r.getClientRects(), function (b) { if (b.width > 0) tops[Math.round(b.top)] = 1; });
        if (Object.keys(tops).length > 1) broken.push(m[0]);
      }
    }
  });
  document.body.setAttribute("data-broken", JSON.stringify(broken));
});</script>"""


def test_no_cell_breaks_inside_a_word_at_any_width(tmp_path, wide_boards, capsys):
    """Issue 39 item 8: "synthetic_prob/e", "unkn/own": a cell wraps at spaces and between the parts of a
    name, or the table scrolls in its box; never inside a word. Checked in the browser's own layout."""
    paths, data = wide_boards
    mh = D.load_benchmark_data("medhorizon", write_jsonl(tmp_path / "release2.jsonl", release_records()))
    demo_like = S.write_submission(mcq_submission(mh, "synthetic_probe", lambda i: i % 3 == 0, size="unknown"),
                                   tmp_path / "demo_like.json")
    assert main(["leaderboard", "build", *map(str, paths), str(demo_like), *data, "--out",
                 str(tmp_path / "board")]) == 0
    page = tmp_path / "board" / "leaderboard.html"
    for width in (1400, 1000, 700, 480):
        probe = page.with_name(f"broken-{width}.html")
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", BROKEN_WORDS + "</body>"),
                         encoding="utf-8")
        dom = dump_dom(probe, tmp_path / "profile", f"--window-size={width},900", "--virtual-time-budget=5000")
        found = re.search(r'data-broken="([^"]*)"', dom)
        assert found, "the measuring script did not run"
        assert json.loads(html.unescape(found.group(1))) == [], f"words broken at {width} px"
    assert "synthetic_<wbr>probe" in page.read_text(), "a name wraps between its parts"
