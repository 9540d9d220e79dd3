"""``--model medhorizon_resume``: any lmms-eval model, resumable item by item.

    lmms-eval --model medhorizon_resume \
        --model_args inner=qwen2_5_vl,journal=runs/qwen.journal,pretrained=Qwen/Qwen2.5-VL-7B-Instruct ...

Every key other than ``inner``, ``journal`` and ``chunk`` goes to the inner
model. Requests are sent to the inner model ``chunk`` at a time (default 1)
and each response is journaled (fsync'ed JSON line, see
:mod:`medhorizon_tasks.journal`) before the next chunk; a rerun with the same
journal skips every journaled request. lmms-eval's own ``--use_cache`` hands a
model all requests at once and records them only when it returns, so a run
killed in the middle would start over.

Each rank writes ``<journal>.rank<r>`` and reads every rank's file, so a run
may resume with a different number of processes.
"""

from __future__ import annotations

from pathlib import Path

from lmms_eval.api.model import lmms
from lmms_eval.models import get_model

from ...journal import Journal, request_key


class ResumableModel(lmms):
    def __init__(self, inner: str, journal: str, chunk: int | str = 1, force_simple: bool = False,
                 **inner_kwargs) -> None:
        super().__init__()
        if not inner or not journal:
            raise ValueError("medhorizon_resume needs model_args inner=<model> and journal=<path>")
        self.inner_name = inner
        self.journal_path = Path(journal)
        self.chunk = max(1, int(chunk))
        self.inner = get_model(inner, bool(force_simple))(**inner_kwargs)
        self.is_simple = getattr(self.inner, "is_simple", True)
        self._journal: Journal | None = None

    @property
    def device(self):
        return getattr(self.inner, "device", None)

    def _open_journal(self) -> Journal:
        if self._journal is None:
            mine = self.journal_path.with_name(f"{self.journal_path.name}.rank{self.rank}")
            others = sorted(p for p in self.journal_path.parent.glob(f"{self.journal_path.name}.rank*") if p != mine)
            self._journal = Journal(mine, read_also=others)
        return self._journal

    def _sync_inner(self) -> None:
        # lmms-eval sets these on the model it knows about, i.e. this wrapper.
        self.inner.task_dict = self.task_dict
        self.inner._rank, self.inner._world_size = self._rank, self._world_size
        if hasattr(self, "accelerator") and not hasattr(self.inner, "accelerator"):
            self.inner.accelerator = self.accelerator

    def _run(self, method: str, requests) -> list:
        self._sync_inner()
        journal = self._open_journal()
        keys = [request_key(method, r.task_name, r.doc_id, r.idx, r.args[0], r.args[1] if len(r.args) > 1 else "")
                for r in requests]
        todo = [i for i, k in enumerate(keys) if k not in journal]
        for start in range(0, len(todo), self.chunk):
            batch = todo[start:start + self.chunk]
            responses = getattr(self.inner, method)([requests[i] for i in batch])
            for i, resp in zip(batch, responses):
                journal.add(keys[i], resp, task=requests[i].task_name, doc_id=requests[i].doc_id)
        return [journal.get(k) for k in keys]

    def generate_until(self, requests) -> list:
        return self._run("generate_until", requests)

    def generate_until_multi_round(self, requests) -> list:
        return self._run("generate_until_multi_round", requests)

    def loglikelihood(self, requests) -> list:
        return [tuple(x) for x in self._run("loglikelihood", requests)]
