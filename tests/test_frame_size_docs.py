"""What the pages say about the size frames are sent at, read against the size rule the code uses
(issue 38 item 13: pages that still said "448 px" after the tasks moved to a total-pixel budget)."""

import re
from pathlib import Path

import pytest

from medhorizon_tasks.core.video.size import DEFAULT_FRAME_PIXELS, InternVLTiles, PixelBudget, QwenVideo

DOCS = Path(__file__).resolve().parents[1] / "docs"
FRAMES = (4, 64, 512, 1248)


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _flat(name: str) -> str:
    return " ".join(_page(name).split())


def test_no_page_says_the_tasks_send_frames_at_a_fixed_448_px():
    """448 px is InternVL's tile and the tasks' old ``max_side``; the tasks' own size is the pixel budget."""
    old = re.compile(r"(task's|protocol's|protocol) (`?max_side`? )?\(?448 ?px|448 px side", re.I)
    found = [f"{p.name}: {m.group(0)}" for p in DOCS.glob("*.md") for m in old.finditer(" ".join(p.read_text().split()))]
    assert found == []


def _row(text: str, label: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| {label}"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


@pytest.mark.parametrize("label, rule", [
    ("`medhorizon_qwen2_5_vl`", QwenVideo(28)),
    ("`medhorizon_qwen3_vl`", QwenVideo(32)),
    ("`medhorizon_internvl3`", InternVLTiles(448)),
    ("every other model", PixelBudget()),
])
def test_the_speed_pages_sizes_are_the_rules_sizes(label, rule):
    cells = _row(_page("speed.md"), label)
    assert cells[:4] == [f"{w}x{h}" for w, h in (rule.size(n, 1920, 1080) for n in FRAMES)]


def test_the_pages_pixel_budget_is_the_tasks_default_and_its_example_the_rules():
    budget = f"{DEFAULT_FRAME_PIXELS:,}"
    for page in ("speed.md", "scaling.md", "extending.md"):
        assert budget in _flat(page), page
    w, h = PixelBudget().size(64, 1920, 1080)
    assert f"a 64-frame request of a 1920 x 1080 source gets {w} x {h} frames" in _flat("scaling.md")
    tasks = [p for p in (DOCS.parent / "task_yaml").glob("_*_template_yaml")]
    assert any(f"frame_pixels: {DEFAULT_FRAME_PIXELS}" in p.read_text() for p in tasks)


def test_the_attention_memory_table_uses_the_bridges_size_for_its_sources():
    text = _flat("diagnostics.md")
    for width, height in ((854, 480), (1920, 1080)):
        h, w = QwenVideo(32).frame_size(height, width, 128)
        assert f"{width} x {height} source ({h} x {w}" in text
        assert f"| {h * w // 32 ** 2} |" in text, "tokens per two-frame unit"
