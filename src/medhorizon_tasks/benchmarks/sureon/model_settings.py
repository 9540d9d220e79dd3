"""Sureon's evaluated models (section 5, Table 3) as rows of the per-model registry: how to run each here.

The paper: "commercial general-purpose VLMs (GPT-5.1 [55] (high reasoning),
Gemini 3.1 Pro [23] (high reasoning)); open generalist models
(Qwen3-VL-8B-Instruct and Qwen3-VL-32B-Thinking [8], ...)". Every row runs the
visual and the blind task (the multimodal gain needs both); the frames are the
protocol's, whatever the model. The closed models get the effort the paper
names, through their provider's request rule
(:mod:`medhorizon_tasks.benchmarks.request_rules`), and the reasoning budget;
the Thinking checkpoint its model card's budget with the wrapper's thinking
switch on (see :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings`).
``paper_row`` is the name Table 3 prints. The other rows of Table 3 (Gemma 4,
Molmo2, MedGemma 1.5, MedGRPO, Sureon-VLM) have no native-video bridge in this
package. Framework-free.
"""

from __future__ import annotations

from ..medhorizon.model_settings import (
    _QWEN3_PIXELS,
    GEMINI_URL,
    QWEN3_VL_THINKING_BUDGET,
    ModelSetting,
    closed_row,
)

__all__ = ["SETTINGS", "TASKS"]

TASKS = "sureon_visual,sureon_blind"
_INPUT = "4-8 frames a clip"
_FRAMES = {"input_shown": _INPUT, "tasks": TASKS}
_SECTION = "Sureon Table 3"

SETTINGS: tuple[ModelSetting, ...] = (
    closed_row("sureon_gpt_5_1", "GPT-5.1 (high)", "gpt-5.1", source="OpenAI GPT-5.1 (high reasoning)",
               table=_SECTION, effort="high", **_FRAMES),
    closed_row("sureon_gemini_3_1_pro", "Gemini 3.1 Pro", "gemini-3.1-pro-preview", GEMINI_URL,
               "Gemini 3.1 Pro (high reasoning)", table=_SECTION, effort="high", **_FRAMES),
    ModelSetting("sureon_qwen3_vl_32b_thinking", "Qwen3VL-32B-T", _SECTION, _INPUT, tasks=TASKS,
                 adapter="medhorizon_qwen3_vl", model_args="pretrained=Qwen/Qwen3-VL-32B-Thinking,enable_thinking=true",
                 pixel_budget=_QWEN3_PIXELS, source="https://huggingface.co/Qwen/Qwen3-VL-32B-Thinking",
                 max_new_tokens=QWEN3_VL_THINKING_BUDGET,
                 note="a thinking model: its model card's budget, the answer read after </think>"),
    ModelSetting("sureon_qwen3_vl_8b_instruct", "Qwen3VL-8B-I", _SECTION, _INPUT, tasks=TASKS,
                 adapter="medhorizon_qwen3_vl", model_args="pretrained=Qwen/Qwen3-VL-8B-Instruct",
                 pixel_budget=_QWEN3_PIXELS, source="https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct"),
)
