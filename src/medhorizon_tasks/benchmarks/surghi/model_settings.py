"""SurgHiBench's baseline models (section 3.3; Tables 2-4) as rows of the per-model registry: how to run each here.

The paper evaluates three zero-shot dual encoders on every dataset, with the
protocol of :mod:`medhorizon_tasks.benchmarks.surghi.zeroshot` (the 16-frame
1 FPS clip around each evaluated frame, one text prompt per class, the argmax
of each level; supplement A.2):

* CLIP ViT-B/16, OpenAI's weights, "each frame is encoded independently and
  similarities are averaged over the temporal window" (section 3.3):
  open_clip's ``ViT-B-16`` / ``openai``;
* SurgCLIP*(β): "our reimplementation of SurgCLIP (β) by Perez et al. with
  identical architecture (TimeSformer + BERT-base)". The reimplementation's
  weights are not released; the row runs the released SurgCLIP(β) through the
  ``surgclip`` encoder (:mod:`medhorizon_tasks.adapters.encoders.surgclip`),
  so its numbers will not match Table 2 exactly (the paper's supplement,
  Table 8, compares the two);
* HyperSurg: not runnable, its weights are not released.

Framework-free.
"""

from __future__ import annotations

from ..medhorizon.model_settings import ModelSetting

__all__ = ["SETTINGS"]

_TABLE = "SurgHiBench Tables 2-4"
_CLIP = "16 frames at 1 FPS around each frame (A.2); frames one by one, similarities averaged"
_VIDEO = "16 frames at 1 FPS around each frame (A.2), one clip embedding (T=16, Sec. 4.2)"

SETTINGS: tuple[ModelSetting, ...] = (
    ModelSetting("surghi_clip", "CLIP", _TABLE, _CLIP, tasks="surghi zeroshot", encoder="open_clip:ViT-B-16/openai",
                 source="https://github.com/openai/CLIP", note="nothing: the paper's model and weights (CLIP ViT-B/16, OpenAI; section 3.3)"),
    ModelSetting("surghi_surgclip", "SurgCLIP*(β)", _TABLE, _VIDEO, tasks="surghi zeroshot", encoder="surgclip",
                 encoder_args=("checkpoint=SURGCLIP_CHECKPOINT",), source="https://pypi.org/project/surgclip/",
                 note="the released SurgCLIP(β) checkpoint (the `surgclip` package's), not the paper's "
                      "re-implementation SurgCLIP*(β), whose weights are not released: numbers will differ from "
                      "Table 2"),
    ModelSetting("surghi_hypersurg", "HyperSurg", _TABLE, _VIDEO, tasks="surghi zeroshot",
                 note="no public weights: HyperSurg (the paper's hyperbolic model) is not released"),
)
