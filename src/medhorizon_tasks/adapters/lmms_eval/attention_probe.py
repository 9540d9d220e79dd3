"""``--model medhorizon_attention``: a native-video bridge's answers, plus one attention measurement per item.

    lmms-eval --model medhorizon_attention --tasks medhorizon_synthetic_frames128 \
        --model_args inner=medhorizon_qwen3_vl,out=runs/attention_items.jsonl,layers=all,pretrained=...

Every key other than ``inner``, ``out`` and ``layers`` goes to the inner
model. Each request is answered by the inner model's own ``generate_until``,
untouched (the scored answer); then, for a request with planned frames, the
bridge measures the item's query-row attention in a separate prefill pass
(:func:`~.bridges.attention.measure_frames`) and one JSON line per item is
appended to ``out`` (``out.rank<r>`` on ranks after the first). The frames are
asked of the task a second time for that pass (``$MEDHORIZON_FRAME_CACHE``
makes it a read). ``medhorizon-tasks diagnose attention`` runs this and
summarises the lines.
"""

from __future__ import annotations

from pathlib import Path

from lmms_eval.api.model import lmms
from lmms_eval.models import get_model

from ...benchmarks.medhorizon.protocol import evidence_seconds
from ...benchmarks.medhorizon.release import Item
from ...core.safeio import append_jsonl
from .bridges.attention import measure_frames
from .bridges.base import request_frames
from .model_args import CheckedModelArgs


class AttentionProbe(CheckedModelArgs, lmms):
    def __init__(self, inner: str, out: str, layers: str = "all", **inner_kwargs) -> None:
        super().__init__()
        if not inner or not out:
            raise ValueError("medhorizon_attention needs model_args inner=<bridge> and out=<path.jsonl>")
        self.inner_name = inner
        self.out = Path(out)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        # lmms-eval reads a lone number in model_args as a number ("-1" arrives as -1.0)
        self.layers = str(int(layers)) if isinstance(layers, (int, float)) else str(layers)
        self.inner = get_model(inner, False)(**inner_kwargs)
        if not hasattr(self.inner, "video_inputs"):
            raise ValueError(f"medhorizon_attention: {inner} has no measurable video inputs; the attention "
                             f"diagnostic supports medhorizon_qwen2_5_vl and medhorizon_qwen3_vl")
        self.is_simple = True

    @property
    def device(self):
        return getattr(self.inner, "device", None)

    def _sync_inner(self) -> None:
        self.inner.task_dict = self.task_dict
        self.inner._rank, self.inner._world_size = self._rank, self._world_size
        if hasattr(self, "accelerator") and not hasattr(self.inner, "accelerator"):
            self.inner.accelerator = self.accelerator

    def _doc(self, request) -> dict:
        return self.task_dict[request.task_name][request.args[5]][request.doc_id]

    def _path(self) -> Path:
        return self.out if self.rank == 0 else self.out.with_name(f"{self.out.name}.rank{self.rank}")

    def generate_until(self, requests) -> list:
        self._sync_inner()
        answers = []
        for request in requests:
            answer = self.inner.generate_until([request])[0]
            answers.append(answer)
            frames = request_frames(self.inner, request)
            if frames is None:
                continue
            doc = self._doc(request)
            item = Item.from_record(doc) if "evidence_windows" in doc else None
            record = measure_frames(self.inner, request.args[0], frames, layers=self.layers,
                                    windows=evidence_seconds(item) if item else ())
            append_jsonl(self._path(), {
                "uid": doc.get("uid", request.doc_id), "task": doc.get("task", request.task_name),
                "family": doc.get("family", ""), "lmms_eval_task": request.task_name, "model": self.inner_name,
                "answer": getattr(answer, "text", answer), **record})
        return answers

    def generate_until_multi_round(self, requests) -> list:
        raise NotImplementedError("medhorizon_attention measures single-round generation")

    def loglikelihood(self, requests) -> list:
        raise NotImplementedError("medhorizon_attention measures generation only")
