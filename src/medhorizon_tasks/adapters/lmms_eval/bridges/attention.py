"""Query-row attention of a Qwen video model, measured in one separate prefill pass (MedHorizon Fig. 9).

What a bridge's answer pass does is never touched: :func:`attention_pass`
runs its own forward pass over the same inputs (no generation, no KV cache,
logits of the last position only) with the text decoder's attention function
swapped, for that pass only, through transformers' ``AttentionInterface``
registry. The registered function receives each layer's queries and keys
after the rotary embedding (M-RoPE included), computes, on the chosen layers,
the softmax attention of the *query rows* only (the question, its options,
the instruction and the last prompt token; not the frame-time preamble) to every key, averaged over
heads, and then hands the call to the model's own implementation (SDPA or
eager; a ``flash_attention_*`` model runs this pass with SDPA), so the pass
computes what the answer pass computes. The full L x L map is never formed:
memory is rows x keys per head group (:data:`HEAD_GROUP_BYTES`).

Visual tokens are mapped to the model's temporal units through the
processor's own ``video_grid_thw``: temporal patch k of a ``[t, h, w]`` grid
is ``h * w / merge**2`` consecutive video tokens, the k-th run of them, and
holds frames ``2k, 2k+1`` (``temporal_patch_size`` = 2). Qwen3-VL's
``<t seconds>`` labels between the patches are text tokens, never counted as
visual. Checked against transformers 5.x's ``qwen2_5_vl`` and ``qwen3_vl``
modeling code (``Qwen*TextAttention.forward`` calls
``ALL_ATTENTION_FUNCTIONS.get_interface(config._attn_implementation, ...)``
with the rotated queries and keys).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["QueryRowAttention", "attention_pass", "visual_units", "query_rows", "resolve_layers", "AttentionPass",
           "HEAD_GROUP_BYTES"]

HEAD_GROUP_BYTES = 256 * 2**20  # float32 rows x keys scores held at once (heads are taken in groups this size)
_ACTIVE: dict[int, tuple["QueryRowAttention", int]] = {}  # id(attention module) -> (recorder, layer index)
_PREFIX = "medhorizon_query_rows_"


def visual_units(input_ids, video_grid_thw, video_token_id: int, merge_size: int) -> list[np.ndarray]:
    """Sequence positions of the video tokens of each temporal unit, in order (one video, batch of one)."""
    ids = torch.as_tensor(input_ids).reshape(-1)
    positions = torch.nonzero(ids == video_token_id).reshape(-1).cpu().numpy()
    units, start = [], 0
    for t, h, w in torch.as_tensor(video_grid_thw).reshape(-1, 3).tolist():
        per_unit = h * w // (merge_size * merge_size)
        for _ in range(t):
            units.append(positions[start:start + per_unit])
            start += per_unit
    if start != positions.size or any(u.size == 0 for u in units):
        raise ValueError(f"video_grid_thw {torch.as_tensor(video_grid_thw).tolist()} accounts for {start} video "
                         f"tokens; the prompt has {positions.size}")
    return units


def query_rows(input_ids, video_token_id: int, vision_end_token_id: int | None = None,
               marker: Sequence[int] = ()) -> np.ndarray:
    """The query rows: from the first occurrence of the token sequence ``marker`` after the video (the
    prompt's ``Question:``) to the last prompt token, so the question, its options, the instruction, the
    chat template's closing tokens and the last prompt token; without ``marker``, or when it is not found,
    every position after the last video token (and its ``<|vision_end|>``)."""
    ids = torch.as_tensor(input_ids).reshape(-1)
    video = torch.nonzero(ids == video_token_id).reshape(-1)
    start = int(video[-1]) + 1 if video.numel() else 0
    if vision_end_token_id is not None and start < ids.numel() and int(ids[start]) == vision_end_token_id:
        start += 1
    m = list(marker)
    if m:
        tail = ids[start:].tolist()
        found = next((i for i in range(len(tail) - len(m) + 1) if tail[i:i + len(m)] == m), None)
        start += found or 0
    if start >= ids.numel():
        raise ValueError("the prompt has no token after its video")
    return np.arange(start, ids.numel())


def resolve_layers(spec: str | Sequence[int] | None, n_layers: int) -> list[int]:
    """``all`` (or None), ``last``, or layer indices (``0,12,-1``; negative from the end)."""
    if spec is None or spec == "all":
        return list(range(n_layers))
    if spec == "last":
        return [n_layers - 1]
    items = [int(x) for x in (spec.replace(";", ",").split(",") if isinstance(spec, str) else spec) if str(x).strip()]
    out = []
    for i in items:
        j = i + n_layers if i < 0 else i
        if not 0 <= j < n_layers:
            raise ValueError(f"layer {i} is out of range: the text decoder has {n_layers} layers")
        out.append(j)
    return sorted(set(out))


def _text_attention_modules(model) -> list:
    lm = model.model.language_model if hasattr(model, "model") and hasattr(model.model, "language_model") else None
    if lm is None:
        raise ValueError(f"{type(model).__name__}: no text decoder at model.model.language_model")
    return [layer.self_attn for layer in lm.layers]


def _base_function(base: str, module):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if base == "eager":  # the modeling file's own eager function (what get_interface falls back to)
        return sys.modules[type(module).__module__].eager_attention_forward
    return ALL_ATTENTION_FUNCTIONS[base]


def _wrapper(base: str):
    def query_rows_attention(module, query, key, value, attention_mask, **kwargs):
        active = _ACTIVE.get(id(module))
        if active is not None:
            recorder, layer = active
            recorder.record(layer, query, key, attention_mask, kwargs.get("scaling"))
        return _base_function(base, module)(module, query, key, value, attention_mask, **kwargs)
    return query_rows_attention


class QueryRowAttention:
    """Context manager: while active, the chosen text layers of ``model`` record the head-averaged
    attention of ``rows`` to every key. ``per_token[layer]``: (L,) the mean over the rows;
    ``rows_attention[layer]``: (R, L), kept only with ``keep_rows`` (tests)."""

    def __init__(self, model, layers: Sequence[int], rows: Sequence[int], *, keep_rows: bool = False):
        self.model = model
        self.modules = _text_attention_modules(model)
        self.layers = list(layers)
        self.rows = torch.as_tensor(np.asarray(rows), dtype=torch.long)
        self.keep_rows = keep_rows
        self.per_token: dict[int, torch.Tensor] = {}
        self.rows_attention: dict[int, torch.Tensor] = {}

    def __enter__(self):
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
        from transformers.modeling_utils import AttentionInterface

        self.config = self.modules[0].config
        self.original = self.config._attn_implementation
        base = self.original or "eager"
        if base.startswith("flash_attention") or base not in ("eager", "sdpa"):
            base = "sdpa"  # flash kernels read config._attn_implementation; this pass runs with SDPA
        self.name = _PREFIX + base
        AttentionInterface.register(self.name, _wrapper(base))
        ALL_MASK_ATTENTION_FUNCTIONS.register(self.name, ALL_MASK_ATTENTION_FUNCTIONS[base])
        for layer in self.layers:
            _ACTIVE[id(self.modules[layer])] = (self, layer)
        self.config._attn_implementation = self.name
        return self

    def __exit__(self, *exc) -> None:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
        from transformers.modeling_utils import AttentionInterface

        self.config._attn_implementation = self.original
        for layer in self.layers:
            _ACTIVE.pop(id(self.modules[layer]), None)
        # the registries are left as they were found (GeneralInterface has register, no unregister)
        AttentionInterface._global_mapping.pop(self.name, None)
        ALL_MASK_ATTENTION_FUNCTIONS._global_mapping.pop(self.name, None)

    @torch.no_grad()
    def record(self, layer: int, query, key, attention_mask, scaling) -> None:
        """Softmax of (rows' queries . keys) * scaling under the pass's mask, averaged over heads."""
        rows = self.rows.to(query.device)
        q = query[0].index_select(1, rows).float()           # (H, R, D)
        k = key[0].float()                                    # (Hkv, L, D)
        heads, n_rows, n_keys = q.shape[0], q.shape[1], k.shape[1]
        groups = heads // k.shape[0]
        scale = float(scaling) if scaling is not None else q.shape[-1] ** -0.5
        mask = None
        if isinstance(attention_mask, torch.Tensor) and attention_mask.dim() == 4:
            mask = attention_mask[0].index_select(1, rows)[..., :n_keys]   # (1 or H, R, L)
        else:  # SDPA's causal shortcut: no mask tensor; one sequence from position 0
            mask = (torch.arange(n_keys, device=q.device)[None, :] <= rows[:, None])[None]
        step = max(1, int(HEAD_GROUP_BYTES // max(1, n_rows * n_keys * 4)))
        total = torch.zeros(n_rows, n_keys, dtype=torch.float32, device=q.device)
        for h0 in range(0, heads, step):
            hs = torch.arange(h0, min(heads, h0 + step), device=q.device)
            scores = q[hs] @ k.index_select(0, hs // groups).transpose(-1, -2) * scale   # (h, R, L)
            m = mask if mask.shape[0] == 1 else mask.index_select(0, hs)
            scores = scores.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else scores + m.float()
            total += torch.softmax(scores, dim=-1).sum(0)
        total /= heads
        self.per_token[layer] = total.mean(0).cpu()
        if self.keep_rows:
            self.rows_attention[layer] = total.cpu()


@dataclass
class AttentionPass:
    """One item's measurement. ``unit_scores`` (T,): attention on each temporal unit (mean over the chosen
    layers and the query rows, heads averaged), ``patch_scores`` (T, P); ``unit_features`` (T, D): each
    unit's mean visual token as the decoder receives it; ``patch_features`` (T, P, D): its tokens, unit
    length (float16); ``rows``: how many query rows; ``tokens``: the prompt's length; ``layers``."""

    unit_scores: np.ndarray
    patch_scores: np.ndarray
    unit_features: np.ndarray
    patch_features: np.ndarray
    rows: int
    tokens: int
    layers: list[int]


def attention_pass(model, inputs, *, video_token_id: int, merge_size: int, vision_end_token_id: int | None = None,
                   layers: str | Sequence[int] | None = "all", marker: Sequence[int] = ()) -> AttentionPass:
    """Run the measuring prefill of ``inputs`` (a processor's output for one prompt with one video);
    ``marker``: the token ids that open the query rows (:func:`query_rows`)."""
    ids = inputs["input_ids"]
    if ids.shape[0] != 1:
        raise ValueError("the attention pass takes one prompt at a time")
    units = visual_units(ids, inputs["video_grid_thw"], video_token_id, merge_size)
    sizes = {u.size for u in units}
    if len(sizes) != 1:
        raise ValueError(f"temporal units of different sizes {sorted(sizes)}: one video per prompt")
    rows = query_rows(ids, video_token_id, vision_end_token_id, marker)
    n_layers = len(_text_attention_modules(model))
    chosen = resolve_layers(layers, n_layers)
    visual = torch.as_tensor(np.concatenate(units))
    captured: dict[str, torch.Tensor] = {}

    def grab(_module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        captured["visual"] = hidden[0].index_select(0, visual.to(hidden.device)).detach()  # model dtype

    first = model.model.language_model.layers[0]
    handle = first.register_forward_pre_hook(grab, with_kwargs=True)
    try:
        with torch.no_grad(), QueryRowAttention(model, chosen, rows) as rec:
            model(**inputs, use_cache=False, logits_to_keep=1)
    finally:
        handle.remove()
    per_token = torch.stack([rec.per_token[layer] for layer in chosen]).mean(0).numpy()
    t, p = len(units), units[0].size
    patch_scores = np.stack([per_token[u] for u in units]).astype(np.float64)
    feats = captured.pop("visual").reshape(t, p, -1)
    # one unit at a time in float32: never a float32 copy of every visual token at once
    unit_features = np.stack([feats[u].float().mean(0).cpu().numpy() for u in range(t)])
    patch_features = np.stack([torch.nn.functional.normalize(feats[u].float(), dim=-1).half().cpu().numpy()
                               for u in range(t)])
    return AttentionPass(patch_scores.sum(1), patch_scores, unit_features, patch_features, int(rows.size),
                         int(ids.shape[1]), chosen)


def unit_frames(n_frames: int, n_units: int, temporal_patch: int) -> list[list[int]]:
    """The planned frames (0-based, presentation order) of each temporal unit: unit k holds frames
    ``k*tp ... k*tp + tp - 1``; the bridge repeats the last frame to fill the last unit (odd counts)."""
    if n_units != -(-n_frames // temporal_patch):
        raise ValueError(f"{n_frames} frames in patches of {temporal_patch} are {-(-n_frames // temporal_patch)} "
                         f"temporal units; the model got {n_units}")
    return [sorted({min(k * temporal_patch + j, n_frames - 1) for j in range(temporal_patch)}) for k in range(n_units)]


def measure_frames(bridge, context: str, frames, *, layers: str | Sequence[int] | None = "all",
                   windows: Sequence[tuple[float, float]] = ()) -> dict:
    """One item's diagnostic record: the measuring pass over the bridge's own inputs for ``context`` about
    the planned ``frames`` (``bridge.video_inputs``), then every metric of
    :func:`~medhorizon_tasks.benchmarks.medhorizon.attention.item_metrics`; ``windows``: the item's evidence
    in seconds on the video's timeline."""
    from ....benchmarks.medhorizon.attention import QUERY_START, item_metrics

    model, processor = bridge.model, bridge.processor
    inputs = bridge.video_inputs(context, frames)
    marker = processor.tokenizer.encode(QUERY_START, add_special_tokens=False) if QUERY_START in context else ()
    measured = attention_pass(model, inputs, video_token_id=model.config.video_token_id,
                              merge_size=processor.video_processor.merge_size,
                              vision_end_token_id=getattr(model.config, "vision_end_token_id", None), layers=layers,
                              marker=marker)
    patch = int(processor.video_processor.temporal_patch_size)
    members = unit_frames(len(frames), len(measured.unit_scores), patch)
    times = [[float(frames.timestamps[i]) for i in unit] for unit in members]
    record = item_metrics(measured.unit_scores, unit_times=times, windows=windows,
                          unit_features=measured.unit_features, patch_features=measured.patch_features,
                          patch_scores=measured.patch_scores, frames_per_unit=patch, n_frames=len(frames))
    record.update(frames=len(frames), unit_frames=members, unit_times=times, layers=measured.layers,
                  query_rows=measured.rows, tokens=measured.tokens,
                  visual_tokens_per_unit=int(measured.patch_scores.shape[1]))
    return record
