"""The paper's per-model input settings (Tables 6 and 7, appendix 7.2) as data, and how to run each row.

One :class:`ModelSetting` per row of the paper's protocol tables: the frame
admission the paper used (``fps`` + ``cap``: "1 FPS, cap C"; or ``frames``: a
fixed uniform budget), which lmms-eval model of this package gives that model
its frames as native video input (``adapter``, see
``medhorizon_tasks.adapters.lmms_eval.bridges``), the model args for the
public checkpoint, the pixel budget the adapter applies, and the generation
budget (``max_new_tokens``, printed as ``--gen_kwargs``). The lmms-eval task
follows from the frame settings (:attr:`ModelSetting.task`), and
:func:`lmms_eval_command` prints the command line.

Generation budget: the tasks' ``max_new_tokens`` is 256 (neither paper states
an answer budget; a bare letter needs a few tokens). A model that thinks before
it answers spends its thinking from the same budget, so 256 tokens cut it off
before the answer (then recorded as ``truncated``, not scored). Those rows get
room to answer: the closed reasoning models (their request rule says they
reason, :mod:`medhorizon_tasks.benchmarks.request_rules`)
:data:`REASONING_BUDGET` tokens, OpenAI's advice for reasoning models
("reserving at least 25,000 tokens for reasoning and outputs",
https://platform.openai.com/docs/guides/reasoning); Qwen3-VL's Thinking
checkpoints :data:`QWEN3_VL_THINKING_BUDGET`, their model card's
``out_seq_length`` for vision-language use
(https://huggingface.co/Qwen/Qwen3-VL-32B-Thinking#generation-hyperparameters),
with the wrapper's thinking switch on (``enable_thinking=true``: the answer is
what follows ``</think>``, an unclosed thought is an empty, truncated reply).
Requests to closed models follow their provider's rule (token-limit key,
temperature, reasoning effort); a row that names an effort (Sureon's "high
reasoning") passes it as a model arg.

Where the paper gives no number ("official processor cap", "official
Qwen-style cap") the cap is the released processor's: 768 frames, the
``max_frames`` of Qwen3-VL's video processor and ``FPS_MAX_FRAMES`` of
qwen-vl-utils (the Qwen2.5-VL family's reference video loader). MedGRPO's
"official released cap" is the same 768 by inference (its public checkpoint's
loader sets ``FPS_MAX_FRAMES=768``; the row says so). The three specialised
long-video rows (AKS, WFS-SB, ViLAMP; Table 7: "128 selected frames") are run
in two steps (:func:`selection_recipe`): the method's selector
(``medhorizon-tasks select``, :mod:`medhorizon_tasks.core.selectors`), then the
base model the user names (the paper does not name it) on the task variant
that shows the selection. Rows whose paper setting cannot be reproduced here
(weights that are not public) have ``adapter=None`` and say why in ``note``.
Rows of zero-shot dual encoders (SurgHiBench) name an ``encoder`` for
``surghi zeroshot`` instead of an adapter. Framework-free: nothing here imports
lmms-eval.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..request_rules import rule_for

__all__ = ["ModelSetting", "SETTINGS", "setting", "lmms_eval_command", "run_command", "selection_recipe",
           "markdown_table", "QWEN_CAP", "REASONING_BUDGET", "QWEN3_VL_THINKING_BUDGET", "closed_row"]

QWEN_CAP = 768  # Qwen3VLVideoProcessor.max_frames == qwen-vl-utils FPS_MAX_FRAMES
CLOSED_CAP = 1248
REASONING_BUDGET = 25_000          # platform.openai.com/docs/guides/reasoning: reserve at least 25,000 tokens
QWEN3_VL_THINKING_BUDGET = 40_960  # Qwen3-VL-*-Thinking model cards, VL generation hyperparameters: out_seq_length

_QWEN25_PIXELS = "video: 128..768 tokens of 28x28 px per frame, 115,200 tokens per video (qwen-vl-utils)"
_QWEN3_PIXELS = "video: 128..768 tokens of 32x32 px per frame, 115,200 tokens per video (qwen-vl-utils)"
_API_PIXELS = "frames within the task's pixel budget per request (frame_pixels), JPEG q90; the provider's own image scaling"
_LLAVA_PIXELS = "the model's image processor (384x384 per frame)"
_CLIP_B32 = "open_clip:ViT-B-32/openai"
_OPENAI_COMPAT = "OpenAI-compatible chat API (frames as images, each after its <t seconds> label)"


@dataclass(frozen=True)
class ModelSetting:
    row: str                     # key for `medhorizon-tasks protocol ROW`
    paper_row: str               # the model as the paper's tables name it
    table: str                   # "Table 6" / "Table 7"
    input_shown: str             # the paper's "Input shown" column
    fps: float | None = None     # fps-based rows: decode at fps, uniformly capped at cap
    cap: int | None = None
    frames: int | None = None    # fixed-frame rows: uniform over the whole video
    selector: bool = False       # frames chosen by the method's own adaptive selector (no uniform plan)
    adapter: str | None = None   # lmms-eval --model of this package (None: not reproducible here)
    model_args: str = ""
    pixel_budget: str = ""
    source: str = ""             # the paper's "official source" column
    note: str = ""
    max_new_tokens: int | None = None  # generation budget (None: the task's 256); printed as --gen_kwargs
    tasks: str | None = None     # the lmms-eval task(s), when not a MedHorizon frame setting (Sureon's rows)
    encoder: str = ""            # `surghi zeroshot --encoder` of a zero-shot dual encoder (SurgHiBench's rows)
    encoder_args: tuple[str, ...] = ()  # its `--encoder-arg KEY=VALUE`s
    selection: str = ""          # selector rows run here: the `select --selector` name (the base model is the user's)
    scorer: str = ""             # and the scorer the recipe names

    @property
    def task(self) -> str | None:
        """The lmms-eval task with this row's frame setting (None: no task of this package has it)."""
        if self.tasks:
            return self.tasks
        if self.selector:
            return None
        if self.frames:
            return f"medhorizon_frames{self.frames}"
        if self.fps == 1 and self.cap:
            return "medhorizon" if self.cap == 64 else f"medhorizon_cap{self.cap}"
        return None

    @property
    def runnable(self) -> bool:
        return bool(((self.adapter or self.selection) and self.task) or self.encoder)


def closed_row(row, paper_row, model, base_url="", source="", *, table="Table 6", effort="", **frames) -> ModelSetting:
    """A closed model's row: ``medhorizon_openai`` with the model id (and base URL), the reasoning effort the
    paper used (``effort``), and the reasoning budget when the provider's rule says the model reasons."""
    args = f"model={model}" + (f",base_url={base_url}" if base_url else "") + (
        f",reasoning_effort={effort}" if effort else "")
    frames = frames or {"input_shown": "1 FPS", "fps": 1, "cap": CLOSED_CAP}
    return ModelSetting(row, paper_row, table, adapter="medhorizon_openai", model_args=args,
                        pixel_budget=_API_PIXELS, source=source,
                        max_new_tokens=REASONING_BUDGET if rule_for(model).reasoning else None,
                        note=_OPENAI_COMPAT + "; the model id is the paper's name, check your provider's", **frames)



GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
# MedGRPO's public weights: a Qwen2.5-VL-7B whose own video loader sets FPS_MAX_FRAMES = 768 (qwen-vl-utils')
MEDGRPO = "UII-AI/uAI-NEXUS-MedVLM-1.0a-7B-RL"
MEDGRPO_NOTE = ("Qwen2.5-VL-7B architecture; cap 768 is INFERRED: the paper says \"official released cap\" without a "
                "number and names no checkpoint; the public checkpoint's loader sets FPS_MAX_FRAMES=768")
_DASHSCOPE = "https://dashscope.aliyuncs.com/compatible-mode/v1"
_MOONSHOT = "https://api.moonshot.ai/v1"

SETTINGS: tuple[ModelSetting, ...] = (
    closed_row("gpt_5_4_mini", "GPT-5.4-mini", "gpt-5.4-mini", source="OpenAI GPT-5.4 mini"),
    closed_row("gpt_5_4", "GPT-5.4", "gpt-5.4", source="OpenAI GPT-5.4"),
    closed_row("gemini_3_1_pro_preview", "Gemini-3.1-Pro-Preview", "gemini-3.1-pro-preview", GEMINI_URL,
               "Gemini 3.1 Pro"),
    closed_row("gemini_2_5_flash", "Gemini-2.5-Flash", "gemini-2.5-flash", GEMINI_URL, "Gemini 2.5 family"),
    closed_row("kimi_k2_5", "Kimi-K2.5", "kimi-k2.5", _MOONSHOT, "Kimi K2.5"),
    closed_row("qwen3_5_plus", "Qwen3.5-Plus", "qwen3.5-plus", _DASHSCOPE, "Alibaba Cloud Model Studio release notes"),
    closed_row("qwen3_6_plus", "Qwen3.6-Plus", "qwen3.6-plus", _DASHSCOPE, "Alibaba Cloud Model Studio release notes"),
    closed_row("qwen3_5_flash", "Qwen3.5-Flash", "qwen3.5-flash", _DASHSCOPE, "Alibaba Cloud Model Studio release notes"),
    ModelSetting("qwen3_vl_4b", "Qwen3-VL-4B", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP, adapter="medhorizon_qwen3_vl",
                 model_args="pretrained=Qwen/Qwen3-VL-4B-Instruct", pixel_budget=_QWEN3_PIXELS,
                 source="https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct",
                 note="cap: the official processor's max_frames (768)"),
    ModelSetting("qwen3_vl_8b", "Qwen3-VL-8B", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP, adapter="medhorizon_qwen3_vl",
                 model_args="pretrained=Qwen/Qwen3-VL-8B-Instruct", pixel_budget=_QWEN3_PIXELS,
                 source="https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct",
                 note="cap: the official processor's max_frames (768)"),
    ModelSetting("minicpm_v_2_6", "MiniCPM-V 2.6", "Table 7", "64", frames=64, adapter="medhorizon_minicpm_v",
                 model_args="pretrained=openbmb/MiniCPM-V-2_6",
                 pixel_budget="the model's own slicing, max_slice_nums=2 a frame (its model card's video setting)",
                 source="https://huggingface.co/openbmb/MiniCPM-V-2_6",
                 note="remote code (transformers 4.40 per its model card); frames as its chat video message, no times"),
    ModelSetting("internvl3_5_8b", "InternVL3.5-8B", "Table 7", "64", frames=64, adapter="medhorizon_internvl3_5",
                 model_args="pretrained=OpenGVLab/InternVL3_5-8B-Instruct",
                 pixel_budget="1 tile of 448x448 per frame (frame_tiles=1)",
                 source="https://huggingface.co/OpenGVLab/InternVL3_5-8B-Instruct"),
    ModelSetting("llava_video_7b", "LLaVA-Video-7B", "Table 7", "1 FPS", fps=1, cap=64, adapter="medhorizon_llava_vid",
                 model_args="pretrained=lmms-lab/LLaVA-Video-7B-Qwen2,conv_template=qwen_1_5,"
                            "mm_spatial_pool_mode=average",
                 pixel_budget=_LLAVA_PIXELS, source="https://huggingface.co/lmms-lab",
                 note="needs LLaVA-NeXT's llava package"),
    ModelSetting("llava_video_72b", "LLaVA-Video-72B", "Table 7", "1 FPS", fps=1, cap=64,
                 adapter="medhorizon_llava_vid",
                 model_args="pretrained=lmms-lab/LLaVA-Video-72B-Qwen2,conv_template=qwen_1_5,"
                            "mm_spatial_pool_mode=average,device_map=auto",
                 pixel_budget=_LLAVA_PIXELS, source="https://huggingface.co/lmms-lab",
                 note="needs LLaVA-NeXT's llava package"),
    ModelSetting("aks", "AKS", "Table 7", "128", frames=128, selector=True, source="https://github.com/ncTimTang/AKS",
                 tasks="medhorizon_aks128", selection="aks", scorer="hf-itm:Salesforce/blip-itm-large-coco",
                 note="AKS's selection (judge-or-split, t1 0.8, depth 5) on 1 FPS relevance from BLIP's image-text "
                      "matching head, large (AKS's default; its CLIP option: --scorer open_clip:ViT-B-32/openai), "
                      "shown to your base model"),
    ModelSetting("vilamp", "ViLAMP", "Table 7", "128", frames=128, selector=True, source="https://github.com/steven-ccq/ViLAMP",
                 tasks="medhorizon_vilamp_select128", selection="vilamp", scorer=_CLIP_B32,
                 note="ViLAMP's differential keyframe selection (CLIP ViT-B/32, threshold 0.2, suppression 0.85) "
                      "among at most 600 of the 1 FPS frames, spread uniformly (its evaluation's cap, "
                      "exp_vMME.py; --selector-arg max_candidates=N), shown to your base model; ViLAMP's own "
                      "model (its feature merging) needs its repository"),
    ModelSetting("wfs_sb", "WFS-SB", "Table 7", "128", frames=128, selector=True, source="https://github.com/MAC-AutoML/WFS-SB",
                 tasks="medhorizon_wfs128", selection="wfs_sb", scorer="hf-itm:Salesforce/blip2-itm-vit-g",
                 note="WFS-SB's selection (db4 wavelet clips, softmax budgets, MMR) on the raw 1 FPS relevance "
                      "of BLIP-2's image-text matching head (WFS-SB's default; its CLIP option, --scorer "
                      "open_clip:ViT-B-32/openai, is min-max normalised per video, said in the rows), shown to "
                      "your base model"),
    ModelSetting("videollama3_7b", "VideoLLaMA3-7B", "Table 7", "1 FPS", fps=1, cap=128,
                 adapter="medhorizon_videollama3", model_args="pretrained=DAMO-NLP-SG/VideoLLaMA3-7B",
                 pixel_budget="the model's processor (VideoLLaMA3 video settings)",
                 source="https://huggingface.co/DAMO-NLP-SG/VideoLLaMA3-7B", note="remote code (trust_remote_code)"),
    ModelSetting("longva_7b_dpo", "LongVA-7B-DPO", "Table 7", "512", frames=512, adapter="medhorizon_longva",
                 model_args="pretrained=lmms-lab/LongVA-7B-DPO,conv_template=qwen_1_5", pixel_budget=_LLAVA_PIXELS,
                 source="https://huggingface.co/lmms-lab/LongVA-7B-DPO", note="needs LongVA's longva package"),
    ModelSetting("videochat_flash_7b", "VideoChat-Flash-7B", "Table 7", "1 FPS", fps=1, cap=512,
                 adapter="medhorizon_videochat_flash",
                 model_args="pretrained=OpenGVLab/VideoChat-Flash-Qwen2_5-7B_InternVideo2-1B,device_map=auto",
                 pixel_budget="the model's image processor (448x448 per frame)",
                 source="https://huggingface.co/OpenGVLab/VideoChat-Flash-Qwen2_5-7B_InternVideo2-1B",
                 note="remote code (transformers 4.x); the planned frames through its own chat, with their times; "
                      "padded to a multiple of 4 frames"),
    ModelSetting("lingshu_7b", "Lingshu-7B", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP, adapter="medhorizon_qwen2_5_vl",
                 model_args="pretrained=lingshu-medical-mllm/Lingshu-7B", pixel_budget=_QWEN25_PIXELS,
                 source="https://huggingface.co/lingshu-medical-mllm/Lingshu-7B",
                 note="Qwen2.5-VL architecture; cap: qwen-vl-utils' 768"),
    ModelSetting("lingshu_32b", "Lingshu-32B", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP,
                 adapter="medhorizon_qwen2_5_vl", model_args="pretrained=lingshu-medical-mllm/Lingshu-32B",
                 pixel_budget=_QWEN25_PIXELS, source="https://huggingface.co/lingshu-medical-mllm/Lingshu-7B",
                 note="Qwen2.5-VL architecture; cap: qwen-vl-utils' 768"),
    ModelSetting("hulu_med_7b", "Hulu-Med-7B", "Table 7", "1 FPS", fps=1, cap=1800, adapter="medhorizon_hulu_med",
                 model_args="pretrained=ZJU-AI4H/Hulu-Med-7B", pixel_budget="the model's processor (VideoLLaMA3-style)",
                 source="https://huggingface.co/ZJU-AI4H/Hulu-Med-7B",
                 note="remote code (transformers 4.51.2 per its requirements); one video with its timestamps"),
    ModelSetting("huatuogpt_vision_7b", "HuatuoGPT-Vision-7B", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP,
                 adapter="medhorizon_qwen2_5_vl",
                 model_args="pretrained=FreedomIntelligence/HuatuoGPT-Vision-7B-Qwen2.5VL", pixel_budget=_QWEN25_PIXELS,
                 source="https://huggingface.co/FreedomIntelligence/HuatuoGPT-Vision-7B-Qwen2.5VL",
                 note="Qwen2.5-VL architecture; cap: qwen-vl-utils' 768"),
    ModelSetting("medgrpo", "MedGRPO", "Table 7", "1 FPS", fps=1, cap=QWEN_CAP, adapter="medhorizon_qwen2_5_vl",
                 model_args=f"pretrained={MEDGRPO}", pixel_budget=_QWEN25_PIXELS,
                 source="https://arxiv.org/abs/2512.06581", note=MEDGRPO_NOTE),
)

_BY_ROW = {s.row: s for s in SETTINGS}


def setting(row: str) -> ModelSetting:
    """The row named ``row``; KeyError listing the rows otherwise."""
    try:
        return _BY_ROW[row]
    except KeyError:
        raise KeyError(f"unknown row {row!r}; rows: {', '.join(_BY_ROW)}") from None


def zeroshot_command(s: ModelSetting, output_path: str = "results/") -> str | None:
    """``medhorizon-tasks surghi zeroshot`` for a zero-shot encoder row (None for any other row); ``--data`` is
    left to the user (the default is the embedded synthetic sample)."""
    if not s.encoder:
        return None
    args = ["medhorizon-tasks", "surghi", "zeroshot", "--encoder", s.encoder]
    for a in s.encoder_args:
        args += ["--encoder-arg", a]
    return shlex.join([*args, "--out", output_path])


def run_command(s: ModelSetting, output_path: str = "results/") -> str | None:
    """The command that runs a row: lmms-eval's for a model row, ``surghi zeroshot`` for an encoder row, the
    selection then the user's base model for a selector row."""
    if s.encoder:
        return zeroshot_command(s, output_path)
    return selection_recipe(s, output_path) if s.selection else lmms_eval_command(s, output_path)


def lmms_eval_command(s: ModelSetting, output_path: str = "results/") -> str | None:
    """The lmms-eval command line for a row (None when the row has no adapter or task), each argument quoted with
    ``shlex`` so that the shell gives lmms-eval exactly these values. No ``--include_path``:
    lmms-eval finds this package's tasks by itself (:mod:`medhorizon_tasks.adapters.lmms_eval.startup`)."""
    if not (s.adapter and s.task):
        return None
    args = ["lmms-eval", "--model", s.adapter, *(["--model_args", s.model_args] if s.model_args else []),
            "--tasks", s.task, *(["--gen_kwargs", generation(s)] if s.max_new_tokens else []),
            "--batch_size", "1", "--log_samples", "--output_path", output_path]
    return shlex.join(args)  # every value quoted for the shell: a space or a ';' in a path stays in its argument


def selection_recipe(s: ModelSetting, output_path: str = "results/", selections: str = "selections/") -> str | None:
    """A selector row's two steps: the selection pre-pass, then the user's base model on the task that shows it
    (None for other rows)."""
    if not s.selection:
        return None
    select = shlex.join(["medhorizon-tasks", "select", "--selector", s.selection, "--scorer", s.scorer, "--budget",
                         str(s.frames), "--recall", "--out", selections])
    run = shlex.join(["medhorizon-tasks", "run", "--model", "MODEL", "--model_args", "MODEL_ARGS", "--tasks", s.task,
                      "--batch_size", "1", "--log_samples", "--output_path", output_path])
    return "\n".join([f"# {s.paper_row} (MedHorizon {s.table}: {s.frames} selected frames): {s.note}.",
                      f"# 1. the selection (sharded under `accelerate launch`, resumable; {s.source}):", select,
                      "# 2. your base model on the selected frames (the paper does not name it; `medhorizon-tasks "
                      "protocol --list` shows the adapters):", f"MEDHORIZON_SELECTION={shlex.quote(selections)} {run}"])


def generation(s: ModelSetting) -> str:
    """The row's ``--gen_kwargs`` (its budget), or the task default."""
    return f"max_new_tokens={s.max_new_tokens}" if s.max_new_tokens else "task default (256 tokens)"


def markdown_table(settings: tuple[ModelSetting, ...] = SETTINGS) -> str:
    """The docs' rows table: paper row, the paper's input, adapter, model args, task, generation budget, the
    command that prints the full command line (or why the row cannot be run here), and what differs from the
    paper (the row's note)."""
    lines = ["| paper row | input (paper) | adapter | model args | task | generation | command | differs from the paper |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in settings:
        if s.selection:
            paper_input = f"{s.frames} selected frames"
        elif s.tasks:
            paper_input = s.input_shown
        elif s.fps and s.cap:
            paper_input = f"{s.input_shown}, cap {s.cap:,}"
        else:
            paper_input = f"{s.frames} frames" if s.frames else f"{s.input_shown}, cap unknown"
        adapter = f"`{s.adapter}`" if s.adapter else (
            "`surghi zeroshot`" if s.encoder else ("your base model" if s.selection else "—"))
        args = f"`{s.model_args}`" if s.adapter and s.model_args else (
            "`" + " ".join([f"--encoder {s.encoder}", *(f"--encoder-arg {a}" for a in s.encoder_args)]) + "`"
            if s.encoder else "—")
        cells = [f"{s.paper_row} ({s.table})", paper_input, adapter, args, f"`{s.task}`" if s.task else "—",
                 f"`{generation(s)}`" if s.max_new_tokens else ("—" if s.encoder or s.tasks == "surghi zeroshot" else "256 tokens"),
                 f"`medhorizon-tasks protocol {s.row}`" if s.runnable else f"not run here: {s.note}",
                 (s.note or "—") if s.runnable else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
