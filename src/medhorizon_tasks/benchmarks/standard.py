"""Which runs are a benchmark's standard protocol, and how the others depart from it: the one place that says.

A leaderboard ranks runs of the standard protocol together; a run that departs from it (frames in another
order, no frames, the oracle's evidence frames, frames chosen by a selector or another sampling strategy, a
Sureon visual run without the blurring pass, a task of its own) is marked with its departures and ranked apart
(``leaderboard build``, the submission service), whatever the number it reached.

Standard, per benchmark:

* **MedHorizon**: the visual mode with frames admitted by "1 FPS, then uniformly capped at C" or a fixed
  uniform budget of N frames over the whole video, in chronological order with their timestamps (the paper's
  rows, Tables 6 and 7): the tasks ``medhorizon``, ``medhorizon_capC``, ``medhorizon_framesN`` (and their
  ``_synthetic`` twins). Diagnostic modes (text only, GT-evidence oracle), frame-order studies, sampling
  strategies and selected frames are not.
* **Sureon**: the visual mode (4-8 frames per clip, blurred) and the blind mode (the pair that gives MG):
  ``sureon_visual``, ``sureon_blind``; ``sureon_visual_noblur`` departs ("no blur").
* **SurgHiBench**: the task ``surghi``.

What a run is known by: the task and its kwargs the run recorded (:func:`run_departures`, read by
``leaderboard make`` and the service from the run's ``results.json``), the departures its own per-item records
name (Sureon's "no blur", MedHorizon's order or mode), and what a submission's metadata says
(:func:`entry_departures`: its ``departures``, and a MedHorizon run of 0 frames).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["STANDARD_TASKS", "run_departures", "setting_departures", "entry_departures", "is_standard_task"]

STANDARD_TASKS = {
    "medhorizon": re.compile(r"medhorizon(?:_synthetic)?(?:_cap\d+|_frames\d+)?"),
    "sureon": re.compile(r"sureon(?:_synthetic)?_(?:visual|blind)"),
    "surghi": re.compile(r"surghi(?:_synthetic)?"),
}
TEXT_ONLY = "text only (no frames)"


def is_standard_task(benchmark: str, task: str) -> bool:
    pattern = STANDARD_TASKS.get(benchmark)
    return bool(pattern and pattern.fullmatch(task))


def _medhorizon(kwargs: Mapping) -> list[str]:
    from .medhorizon.protocol import FrameSetting

    try:
        s = FrameSetting.from_kwargs(dict(kwargs))
    except (TypeError, ValueError) as exc:
        return [f"a frame setting this package does not know ({exc})"]
    return setting_departures(s)


def setting_departures(s) -> list[str]:
    """How a MedHorizon :class:`~.medhorizon.protocol.FrameSetting` departs from the standard protocol: what
    each record of a run carries (both frameworks pass it to ``scoring.record_for``)."""
    out = []
    if s.mode == "text":
        out.append(TEXT_ONLY)
    elif s.mode == "oracle":
        out.append("GT-evidence oracle frames")
    if s.strategy == "selected":
        out.append(f"frames selected by {s.selector}")
    elif s.strategy != "uniform":
        out.append(f"{s.strategy.replace('_', '-')} sampling")
    if s.order != "original":
        out.append(f"frame order: {s.order.replace('_', ' ')}")
    elif s.order_study:
        out.append("frame-order study prompt (no frame times)")
    return out


def _sureon(kwargs: Mapping) -> list[str]:
    from .paper_match import NO_BLUR
    from .sureon.protocol import blur_enabled

    mode = str(kwargs.get("mode", "visual"))
    if mode not in ("visual", "blind"):
        return [f"mode {mode!r}"]
    blur = kwargs.get("blur")
    try:
        off = mode == "visual" and blur is not None and not blur_enabled(blur)
    except ValueError:
        off = False
    return [NO_BLUR] if off else []


def run_departures(benchmark: str, task: str | None, kwargs: Mapping | None) -> list[str]:
    """How a run of ``task`` with its recorded ``kwargs`` (``lmms_eval_specific_kwargs``) departs from the
    benchmark's standard protocol; empty for a standard run. A task of another name whose kwargs show no
    departure (``medhorizon_sampling_uniform_32``, a task of the user's own) is named as not standard."""
    kwargs = kwargs or {}
    out = _medhorizon(kwargs) if benchmark == "medhorizon" else _sureon(kwargs) if benchmark == "sureon" else []
    if not out and task and not is_standard_task(benchmark, task):
        out.append(f"task {task} is not a standard task of the protocol")
    return out


def entry_departures(metadata: Mapping) -> list[str]:
    """The departures a submission's metadata shows: its ``departures``, and for MedHorizon a run of 0 frames
    (text only) or another mode than the visual one, which its ``departures`` may not say."""
    out = [str(d) for d in metadata.get("departures") or ()]
    if metadata.get("benchmark") == "medhorizon":
        protocol = metadata.get("input_protocol") or {}
        mode = metadata.get("mode") or "visual"
        if (protocol.get("frames") == 0 or mode == "text") and TEXT_ONLY not in out:
            out.append(TEXT_ONLY)
        elif mode not in ("visual", "text") and not any(mode in d for d in out):
            out.append(f"mode {mode}")
    return list(dict.fromkeys(out))
