"""The ``medhorizon_bridges`` entry point of group ``lmms_eval.models``: the bridge models, as class paths.

lmms-eval calls :func:`manifests` while its model registry starts (on
``import lmms_eval.models``, before any model is chosen), so this module
imports nothing at import time: a bridge's module (and the lmms-eval wrapper
it subclasses) is imported only when ``--model`` names it. The names are new
(``medhorizon_*``): an entry point named like a built-in model silently
replaces lmms-eval's own wrapper. The probe models have their own entry
point (``medhorizon``, :mod:`medhorizon_tasks.adapters.lmms_eval.manifest`).
"""

from __future__ import annotations

__all__ = ["BRIDGES", "manifests"]

_BASE = "medhorizon_tasks.adapters.lmms_eval.bridges"

# model name -> (class path, the lmms-eval 0.7.3 wrapper it subclasses)
BRIDGES = {
    "medhorizon_qwen2_5_vl": (f"{_BASE}.qwen.Qwen2_5_VL", "qwen2_5_vl"),
    "medhorizon_qwen3_vl": (f"{_BASE}.qwen.Qwen3_VL", "qwen3_vl"),
    "medhorizon_internvl3": (f"{_BASE}.internvl.InternVL3", "internvl3"),
    "medhorizon_internvl3_5": (f"{_BASE}.internvl.InternVL3_5", "internvl3_5"),
    "medhorizon_videollama3": (f"{_BASE}.videollama3.VideoLLaMA3", "videollama3"),
    "medhorizon_llava_onevision": (f"{_BASE}.llava.Llava_OneVision", "llava_onevision"),
    "medhorizon_llava_vid": (f"{_BASE}.llava.LlavaVid", "llava_vid"),
    "medhorizon_longva": (f"{_BASE}.longva.LongVA", "longva"),
    "medhorizon_minicpm_v": (f"{_BASE}.minicpm.MiniCPM_V", "minicpm_v"),
    "medhorizon_videochat_flash": (f"{_BASE}.videochat.VideoChatFlash", "videochat_flash"),
    "medhorizon_hulu_med": (f"{_BASE}.videollama3.HuluMed", "videollama3"),  # no lmms-eval Hulu-Med wrapper
    "medhorizon_gemma4": (f"{_BASE}.gemma.Gemma4", "gemma4"),
    "medhorizon_molmo2": (f"{_BASE}.gemma.Molmo2", "gemma4"),  # no lmms-eval Molmo2 wrapper: gemma4's loading
    "medhorizon_gemma3": (f"{_BASE}.gemma.Gemma3", "gemma3"),
    "medhorizon_openai": (f"{_BASE}.openai.OpenAICompatible", "openai"),
}


def manifests():
    """One ``ModelManifest`` per bridge (all "simple" lmms-eval models). Never raises: an exception here makes
    lmms-eval drop every plugin's models."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return [ModelManifest(name, simple_class_path=path) for name, (path, _) in BRIDGES.items()]
