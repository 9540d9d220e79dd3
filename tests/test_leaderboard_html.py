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

from medhorizon_tasks.leaderboard import build as B
from medhorizon_tasks.leaderboard import data as D
from test_leaderboard import (
    HIERARCHY,
    mcq_submission,
    random_ish,
    release_records,
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


def dump_dom(page, profile) -> str:
    """The DOM after the page loaded (scripts run), as Chromium serialises it."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--disable-background-networking", "--disable-extensions", "--no-first-run",
           f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


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
    paths = B.write_leaderboard(boards, tmp_path / "board", title="MedHorizon-tasks test board")
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
    assert perfect[:3] == ["1", "Perfect-VL", "7B"] and perfect[5] == "100.0 [100.0, 100.0]"
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
    md_links = re.findall(r"(?<!\\)\]\(([^)\s]*)\)", B.format_markdown(boards))
    assert sorted(md_links) == ["HTTPS://ok.example/a?b=1&c=2", "http://ok.example/%22%3E%3Cimg%20src=x%3E"]
