"""The documentation site: ``mkdocs build --strict`` of ``mkdocs.yml`` (a broken link or anchor, or a page left
out of the nav, fails it), and the README's table of pages lists every page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_pages() -> list[str]:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [page for entry in nav for page in entry.values()]


def _build(tmp_path: Path, config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, env=env, timeout=600)


def test_the_site_builds_strictly_with_every_page(tmp_path):
    res = _build(tmp_path, ROOT / "mkdocs.yml")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "WARNING" not in res.stderr, res.stderr[-3000:]
    pages = _nav_pages()
    assert sorted(pages) == sorted(p.name for p in DOCS.glob("*.md"))
    for page in pages:
        html = tmp_path / "site" / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert html.exists(), page


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The check above is a real one: the same site with one link to a missing anchor does not build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for page in DOCS.glob("*.md"):
        (docs / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    with open(docs / "layout.md", "a", encoding="utf-8") as f:
        f.write("\n[gone](data.md#no-such-section)\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), encoding="utf-8")
    res = _build(tmp_path, config)
    assert res.returncode != 0 and "no-such-section" in res.stderr, res.stderr[-3000:]


def test_the_readme_lists_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", readme))
    assert listed == {p.name for p in DOCS.glob("*.md")} - {"index.md"}
