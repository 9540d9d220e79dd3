"""Refuse a built-in lmms-eval wrapper known to mishandle a task's frame list; name the bridge to use instead.

The tasks of this package hand a model a list of planned frames. What lmms-eval
0.7.3's own wrappers do with such a list (measured; see each bridge module):
most take it as N unrelated images, some use one frame, drop it, or crash. A run
through one of them gives numbers that are not the protocol's, with no error.
:func:`frame_list_problem` says so before the run starts; the start-up hook
stops the run with its message.

Opt out with ``MEDHORIZON_ALLOW_FRAME_LIST=1`` (e.g. to measure the wrapper's
own behaviour on purpose). Pure: reads only its arguments and the environment
mapping it is given (``os.environ`` by default, through
:func:`medhorizon_tasks.core.settings.env_flag`); imports nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ....core.settings import env_flag

__all__ = ["ALLOW_ENV", "MISHANDLING", "frame_list_problem", "frame_tasks"]

ALLOW_ENV = "MEDHORIZON_ALLOW_FRAME_LIST"
BENCHMARK_PREFIXES = ("medhorizon", "sureon", "surghi")
TEXT_ONLY_SUFFIXES = ("_text", "_blind")  # these tasks send no frames
RESUME_MODEL = "medhorizon_resume"


@dataclass(frozen=True)
class Mishandling:
    does: str                  # what the wrapper does with a list of frames
    bridge: str | None         # the model to run instead (None: no bridge yet)
    bridge_args: str = ""      # model args the bridge needs in addition


_IMAGES = "treats the frames as {n} independent images"
MISHANDLING: dict[str, Mishandling] = {
    "qwen2_5_vl": Mishandling(_IMAGES.format(n="N") + " (no temporal position ids, each upscaled to the image "
                              "min_pixels: twice the visual tokens of one video)", "medhorizon_qwen2_5_vl"),
    "qwen3_vl": Mishandling(_IMAGES.format(n="N") + " (no <t seconds> time labels, each upscaled to the image "
                            "min_pixels)", "medhorizon_qwen3_vl"),
    "internvl3": Mishandling("sends N bare <image> tags, one tile each (no FrameN: video prompt)",
                             "medhorizon_internvl3"),
    "internvl3_5": Mishandling("sends N bare <image> tags, one tile each (no FrameN: video prompt)",
                               "medhorizon_internvl3_5"),
    "videollama3": Mishandling("uses only the first frame, silently", "medhorizon_videollama3"),
    "llava_onevision": Mishandling(_IMAGES.format(n="N") + " unless the task YAML carries "
                                   "metadata {task_type: video, sample_frames: K}", "medhorizon_llava_onevision"),
    "llava_vid": Mishandling("crashes (os.path.isdir on a PIL image)", "medhorizon_llava_vid"),
    "longva": Mishandling(_IMAGES.format(n="N"), "medhorizon_longva"),
    "gemma4": Mishandling(_IMAGES.format(n="N") + " (no timestamps; Gemma 4 takes video with its times)",
                          "medhorizon_gemma4"),
    "minicpm_v": Mishandling("fails with an AssertionError", "medhorizon_minicpm_v"),
    "videochat_flash": Mishandling("fails with NotImplementedError", "medhorizon_videochat_flash"),
    "gemini": Mishandling("silently drops a video given as frames (chat class)", "medhorizon_openai",
                          "base_url=https://generativelanguage.googleapis.com/v1beta/openai/,model=<gemini model>"),
}
MISHANDLING["gemini_api"] = MISHANDLING["gemini"]  # lmms-eval's alias


def frame_tasks(task_names: str | Iterable[str]) -> list[str]:
    """The tasks of this package among ``task_names`` (a list or lmms-eval's comma-separated ``--tasks``) that
    show frames: names starting with medhorizon, sureon or surghi, except the text-only ones."""
    names = task_names.split(",") if isinstance(task_names, str) else list(task_names)
    names = [n.strip() for n in names if n and n.strip()]
    return [n for n in names if n.startswith(BENCHMARK_PREFIXES) and not n.endswith(TEXT_ONLY_SUFFIXES)]


def _parse_model_args(model_args: str | Mapping | None) -> dict:
    if isinstance(model_args, Mapping):
        return {str(k): str(v) for k, v in model_args.items()}
    out = {}
    for part in (model_args or "").split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def frame_list_problem(model_name: str, task_names: str | Iterable[str], model_args: str | Mapping | None = "",
                       environ: Mapping[str, str] | None = None) -> str | None:
    """The message to stop the run with, or None when the run may go ahead.

    A problem is a built-in wrapper of :data:`MISHANDLING` (directly, or as
    ``inner=`` of ``medhorizon_resume``) asked to evaluate a task of this
    package that shows frames, without ``MEDHORIZON_ALLOW_FRAME_LIST=1``.
    The probe models and the bridges always pass.
    """
    if env_flag(ALLOW_ENV, environ=environ):
        return None
    tasks = frame_tasks(task_names)
    if not tasks:
        return None
    name, via = model_name, ""
    if model_name == RESUME_MODEL:
        name = _parse_model_args(model_args).get("inner", "")
        via = f" (as inner={name} of {RESUME_MODEL})"
    found = MISHANDLING.get(name)
    if found is None:
        return None
    shown = ", ".join(tasks[:3]) + (", ..." if len(tasks) > 3 else "")
    head = (f"lmms-eval's `{name}` wrapper{via} {found.does} when a task hands it a list of frames, so "
            f"{shown} would not be evaluated under the benchmark's frame protocol.")
    if found.bridge:
        extra = f" plus {found.bridge_args}" if found.bridge_args else ""
        if via:
            fix = f"Use inner={found.bridge} (the same other model args{extra}),"
        else:
            fix = f"Use --model {found.bridge} (the same --model_args{extra}),"
        fix += " which gives the model the frames as its native video input with their real times."
    else:
        fix = "This package has no native-video bridge for it yet."
    return f"{head} {fix} To run `{name}` anyway, set {ALLOW_ENV}=1."
