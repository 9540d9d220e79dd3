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
``paper_row`` is the name Table 3 prints. Table 3 names no checkpoint size for
Gemma 4, Molmo2 and MedGemma 1.5: Gemma 4 is the 31B instruction model the paper
names in its appendix (B.4.3, "Gemma-4-31B-IT" as held-out blind guesser),
Molmo2 and MedGemma 1.5 the released checkpoints ``allenai/Molmo2-8B`` and
``google/medgemma-1.5-4b-it`` (each row says so). Every runnable row gets the
prompt of appendix D.1 and Fig. 17 ("Frames are interleaved with their
timestamps"): the clip's range, each frame as an image right after its
``Frame k at t s:`` line, then the question (Table 3: "Each model is evaluated
with image inputs"); the native-video rows (Qwen3-VL, MedGRPO, Gemma 4, Molmo2)
through the model's image input, whose video input would put the processor's
own time labels, not the prompt's lines, before the frames (``frames_as``,
printed by ``protocol --list`` and in the docs' "differs from the paper"
column). Sureon-VLM and its two ablations
(Sureon-only, Public-only) are not runnable: their weights are not released.
Framework-free.
"""

from __future__ import annotations

from ..medhorizon.model_settings import (
    GEMINI_URL,
    MEDGRPO,
    QWEN3_VL_THINKING_BUDGET,
    ModelSetting,
    closed_row,
)

__all__ = ["SETTINGS", "TASKS"]

TASKS = "sureon_visual,sureon_blind"
_INPUT = "4-8 frames a clip"
# how each row's frames reach the model (``frames_as``): the prompt's layout, every row as images (Table 3)
_AS_IMAGES = 'each an image right after its "Frame k at t s:" line (Fig. 17; Table 3: image inputs)'
_NOT_VIDEO = ('each an image right after its "Frame k at t s:" line (Fig. 17; Table 3: image inputs), through '
              "the model's image input, not its video input")
# the Qwen rows' frames are images: the lmms-eval wrapper's image pixel range (model args min_pixels, max_pixels)
_QWEN_IMAGE_PIXELS = "images: 200,704..1,605,632 px a frame (the wrapper's min_pixels, max_pixels)"
_FRAMES = {"input_shown": _INPUT, "tasks": TASKS, "frames_as": _AS_IMAGES}
_IMAGES = {"input_shown": _INPUT, "tasks": TASKS, "frames_as": _NOT_VIDEO}
_SECTION = "Sureon Table 3"
_NOT_RELEASED = "no public weights: Sureon-VLM (the paper's fine-tune of Qwen3-VL-8B) is not released"

SETTINGS: tuple[ModelSetting, ...] = (
    closed_row("sureon_gpt_5_1", "GPT-5.1 (high)", "gpt-5.1", source="OpenAI GPT-5.1 (high reasoning)",
               table=_SECTION, effort="high", **_FRAMES),
    closed_row("sureon_gemini_3_1_pro", "Gemini 3.1 Pro", "gemini-3.1-pro-preview", GEMINI_URL,
               "Gemini 3.1 Pro (high reasoning)", table=_SECTION, effort="high", **_FRAMES),
    ModelSetting("sureon_qwen3_vl_32b_thinking", "Qwen3VL-32B-T", _SECTION, **_IMAGES,
                 adapter="medhorizon_qwen3_vl", model_args="pretrained=Qwen/Qwen3-VL-32B-Thinking,enable_thinking=true",
                 pixel_budget=_QWEN_IMAGE_PIXELS, source="https://huggingface.co/Qwen/Qwen3-VL-32B-Thinking",
                 max_new_tokens=QWEN3_VL_THINKING_BUDGET,
                 note="a thinking model: its model card's budget, the answer read after </think>"),
    ModelSetting("sureon_qwen3_vl_8b_instruct", "Qwen3VL-8B-I", _SECTION, **_IMAGES,
                 adapter="medhorizon_qwen3_vl", model_args="pretrained=Qwen/Qwen3-VL-8B-Instruct",
                 pixel_budget=_QWEN_IMAGE_PIXELS, source="https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct"),
    ModelSetting("sureon_gemma_4", "Gemma 4", _SECTION, **_IMAGES, adapter="medhorizon_gemma4",
                 model_args="pretrained=google/gemma-4-31B-it",
                 pixel_budget="Gemma 4's image processor (max_soft_tokens a frame, the wrapper's 280)",
                 source="https://huggingface.co/google/gemma-4-31B-it",
                 note="checkpoint: Table 3 names no size; the 31B instruction model is the one the paper's appendix "
                      "names (B.4.3)"),
    ModelSetting("sureon_molmo2", "Molmo2", _SECTION, **_IMAGES, adapter="medhorizon_molmo2",
                 model_args="pretrained=allenai/Molmo2-8B", pixel_budget="Molmo2's image processor",
                 source="https://huggingface.co/allenai/Molmo2-8B",
                 note="checkpoint: Table 3 names no size (Molmo2-8B assumed); needs transformers >= 5.20"),
    ModelSetting("sureon_medgemma_1_5", "MedGemma 1.5", _SECTION, **_FRAMES, adapter="medhorizon_gemma3",
                 model_args="pretrained=google/medgemma-1.5-4b-it",
                 pixel_budget="Gemma 3's image processor (896x896, 256 tokens an image)",
                 source="https://huggingface.co/google/medgemma-1.5-4b-it",
                 note="checkpoint: Table 3 names no size (the released 4B assumed); a Gemma 3 model (no video "
                      "input)"),
    ModelSetting("sureon_medgrpo", "MedGRPO", _SECTION, **_IMAGES, adapter="medhorizon_qwen2_5_vl",
                 model_args=f"pretrained={MEDGRPO}", pixel_budget=_QWEN_IMAGE_PIXELS,
                 source="https://arxiv.org/abs/2512.06581",
                 note="the public MedGRPO checkpoint (Qwen2.5-VL-7B)"),
    ModelSetting("sureon_vlm", "Sureon-VLM", _SECTION, _INPUT, tasks=TASKS, note=_NOT_RELEASED),
    ModelSetting("sureon_vlm_sureon_only", "Sureon-VLM (Sureon-only)", _SECTION, _INPUT, tasks=TASKS,
                 note=_NOT_RELEASED),
    ModelSetting("sureon_vlm_public_only", "Sureon-VLM (Public-only)", _SECTION, _INPUT, tasks=TASKS,
                 note=_NOT_RELEASED),
)
