"""``--model medhorizon_resume``: any lmms-eval model, resumable item by item.

    lmms-eval --model medhorizon_resume \
        --model_args inner=qwen2_5_vl,journal=runs/qwen.journal,pretrained=Qwen/Qwen2.5-VL-7B-Instruct ...

Every key other than ``inner``, ``journal``, ``chunk`` and ``retry_refused`` goes
to the inner model. Requests are sent to the inner model ``chunk`` at a time (default 1)
and each response is journaled (fsync'ed JSON line, see
:mod:`medhorizon_tasks.core.journal`) before the next chunk; a rerun with the same
journal skips every journaled request. lmms-eval's own ``--use_cache`` hands a
model all requests at once and records them only when it returns, so a run
killed in the middle would start over.

What is journaled with each response, so that a resumed run scores exactly as
an uninterrupted one:

* the video outcomes recorded while the response was produced (frames
  decoded, or the video error: :mod:`medhorizon_tasks.core.video.status`) and the
  identity of each video file (a digest of all of its bytes:
  :mod:`medhorizon_tasks.core.file_identity`); a replayed response puts them
  back, because ``doc_to_visual`` is not called for it, and a response whose
  video's bytes changed since (replaced, repaired anywhere, or put in place
  where it was missing) is asked again;
* the run's identity (inner model, every model argument but those that only
  say how a reply is fetched, package version) and the request's (task name
  and configuration, the document, prompt and generation settings) are part of
  the key, so a journal written with other ``model_args`` (another checkpoint
  or seed) is never reused, and one written with other ``max_retries``,
  ``timeout``, ``num_concurrent``, ``retry_backoff_s`` or ``api_key``
  (:data:`medhorizon_tasks.core.journal.TRANSPORT_ARGS`) is.

A response that is a failure (a request that failed after its retries, an
empty or cut-off reply: :func:`medhorizon_tasks.core.responses.response_failure`)
is returned to lmms-eval, which records it as such, but never journaled: a
rerun asks it again (a journal of an earlier version that holds one asks it
again too). An item on which the accelerator ran out of memory (``oom``: the
inner model's call raised ``torch.cuda.OutOfMemoryError``; the accelerator's
cache is emptied and the run goes on) is journaled as such, so that a rerun
asks it again and says how many it asks. An item the provider refused for its content (``refused``) is
journaled: the provider would refuse it again, and asking it on every rerun
would pay for it every time; ``retry_refused=true`` asks the journaled
refusals again.

Each rank writes ``<journal>.rank<r>`` and reads every rank's file, so a run
may resume with a different number of processes.
"""

from __future__ import annotations

import json
from pathlib import Path

from lmms_eval.api.model import lmms
from lmms_eval.models import get_model
from loguru import logger

from ...core.journal import TRANSPORT_ARGS, Journal, request_key, run_identity
from ...core.responses import OOM, REFUSED, response_failure
from ...core.video.ahead import DEFAULT_AHEAD_DEPTH, ahead, ahead_budget, result_bytes, run_plans
from ...core.video.planned_frames import describe_visuals
from ...core.video.size import requested_size
from ...core.video.status import OUTCOMES
from .bridges.base import answer_or_oom, request_visuals
from .model_args import CheckedModelArgs


def _task_fingerprint(request) -> str:
    """The configuration of the request's task that changes what the model is shown (frame setting,
    generation kwargs, ...); the task object is the owner of the request's ``doc_to_visual``."""
    args = request.args
    task = getattr(args[2], "__self__", None) if len(args) > 2 else None
    if task is None:
        return ""
    config = getattr(task, "config", None)
    return json.dumps({"kwargs": getattr(task, "lmms_eval_specific_kwargs", None),
                       "generation": getattr(config, "generation_kwargs", None)}, sort_keys=True, default=str)


class ResumableModel(CheckedModelArgs, lmms):
    def __init__(self, inner: str, journal: str, chunk: int | str = 1, force_simple: bool = False,
                 retry_refused: bool | str = False, **inner_kwargs) -> None:
        super().__init__()
        if not inner or not journal:
            raise ValueError("medhorizon_resume needs model_args inner=<model> and journal=<path>")
        self.inner_name = inner
        self.journal_path = Path(journal)
        self.chunk = max(1, int(chunk))
        self.retry_refused = _flag(retry_refused, "retry_refused")
        self.identity, self.identity_description = run_identity(inner, inner_kwargs, transport=TRANSPORT_ARGS,
                                                                force_simple=bool(force_simple))
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
            self._journal = Journal(mine, read_also=others, identity=self.identity)
            if self._journal.foreign:
                logger.warning(f"[medhorizon_resume] {self.journal_path}: {self._journal.foreign} journaled "
                               f"response(s) were written by another model identity (model or model_args); they "
                               f"are not reused. This run: {self.identity_description}")
        return self._journal

    def _sync_inner(self) -> None:
        # lmms-eval sets these on the model it knows about, i.e. this wrapper.
        self.inner.task_dict = self.task_dict
        self.inner._rank, self.inner._world_size = self._rank, self._world_size
        if hasattr(self, "accelerator") and not hasattr(self.inner, "accelerator"):
            self.inner.accelerator = self.accelerator

    def _doc(self, request):
        try:
            return self.task_dict[request.task_name][request.args[5]][request.doc_id]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None

    def _key(self, method: str, r) -> str:
        return request_key(self.identity, method, r.task_name, _task_fingerprint(r), r.doc_id, r.idx,
                           self._doc(r), r.args[0], r.args[1] if len(r.args) > 1 else "")

    def _run(self, method: str, requests) -> list:
        self._sync_inner()
        journal = self._open_journal()
        keys = [self._key(method, r) for r in requests]
        todo, stale, refused, oom_again = [], 0, 0, 0
        for i, k in enumerate(keys):
            rec = journal.record(k)
            if rec is not None and OUTCOMES.unchanged(rec.get("video")) and self._reused(rec["response"]):
                OUTCOMES.restore(rec.get("video"))  # doc_to_visual is not called for it
                refused += _status(rec["response"]) == REFUSED
            else:
                todo.append(i)
                stale += rec is not None and self._reused(rec["response"])
                oom_again += rec is not None and _status(rec["response"]) == OOM
        if oom_again:
            logger.warning(f"[medhorizon_resume] {self.journal_path}: {oom_again} item(s) on which the accelerator ran "
                           f"out of memory (oom) in an earlier run are asked again")
        if refused:
            logger.warning(f"[medhorizon_resume] {self.journal_path}: {refused} item(s) the provider refused for "
                           f"their content are not asked again (journaled as refused); model arg "
                           f"retry_refused=true asks them again")
        if stale:
            logger.warning(f"[medhorizon_resume] {self.journal_path}: {stale} journaled response(s) are asked "
                           f"again: a video they were given has changed, or appeared, since they were journaled")
        failed: dict[str, object] = {}  # this run's failed responses: returned, never journaled
        prefetch = self._ahead(method, [requests[i] for i in todo])
        n_oom = 0
        for start in range(0, len(todo), self.chunk):
            batch = todo[start:start + self.chunk]
            shown = []  # what each request of the chunk shows the model, for an oom's report
            for _ in batch:  # this chunk's frames are decoded (the inner model's doc_to_visual finds them decoded)
                done = next(prefetch, None)  # and the next chunks' decode while the inner model answers this one
                shown.append(done.value[1] if done is not None and done.value is not None else "its frames")
            mark = OUTCOMES.mark()
            chunk = [requests[i] for i in batch]
            # an inner model without the bridges' own per-item guard: out of memory on the chunk is each item's oom
            answer = answer_or_oom(lambda: getattr(self.inner, method)(chunk), None,
                                   f"{len(batch)} request(s) of {self.inner_name}", what="; ".join(shown))
            responses = [answer] * len(batch) if isinstance(answer, str) else answer
            video = OUTCOMES.since(mark)
            for i, resp in zip(batch, responses):
                resp = _journalable(resp)
                if _status(resp) == OOM:
                    n_oom += 1  # journaled as oom: a rerun asks it again and says so
                elif _failed(resp) and _status(resp) != REFUSED:
                    failed[keys[i]] = resp
                    continue
                journal.add(keys[i], resp, replace=True, task=requests[i].task_name, doc_id=requests[i].doc_id,
                            video=video)
        if n_oom:
            logger.warning(f"[medhorizon_resume] {n_oom} item(s) ran out of accelerator memory (oom): journaled as "
                           f"such, a rerun asks them again")
        if failed:
            logger.warning(f"[medhorizon_resume] {len(failed)} response(s) were failures (request errors, empty or "
                           f"cut-off replies): not journaled, a rerun asks them again")
        return [failed[k] if k in failed else journal.get(k) for k in keys]

    def _reused(self, response) -> bool:
        """Whether a journaled response stands: an answer, or a refusal unless ``retry_refused`` (never an oom)."""
        status = _status(response)
        return status is None or (status == REFUSED and not self.retry_refused)

    def _ahead(self, method: str, requests):
        """The requests' frames decoded ahead, in order, while the inner model answers the earlier chunks
        (:func:`~medhorizon_tasks.adapters.lmms_eval.bridges.base.visuals_ahead`, at the inner model's
        ``frame_size_rule`` when it has one): each plan lands in the run's store of decoded plans, where the
        inner model's own ``doc_to_visual`` call finds it. Errors are the inner model's call's to report."""
        if method != "generate_until":
            return iter(())
        rule = getattr(self.inner, "frame_size_rule", None)

        def work(request) -> tuple[int, str]:  # the frames' bytes and what they are (the images are dropped; the
            with requested_size(rule), OUTCOMES.unrecorded():  # store keeps the decoded plan; the inner model's
                visuals = request_visuals(self, request)       # call records the outcome)
                return result_bytes(visuals), describe_visuals(visuals)

        return ahead(requests, work, nbytes=lambda value: value[0], depth=max(self.chunk, DEFAULT_AHEAD_DEPTH),
                     budget_bytes=min(ahead_budget(), run_plans().budget_bytes))

    def generate_until(self, requests) -> list:
        return self._run("generate_until", requests)

    def generate_until_multi_round(self, requests) -> list:
        return self._run("generate_until_multi_round", requests)

    def loglikelihood(self, requests) -> list:
        return [tuple(x) for x in self._run("loglikelihood", requests)]


def _journalable(response):
    """A generation's text (lmms-eval's ``GenerationResult`` unwrapped: JSON cannot hold it, and its token counts
    are not journaled); any other response (a text, a loglikelihood pair, multi-round texts) as it is."""
    from .versions import generation_result_class

    wrapped = generation_result_class()  # None before lmms-eval 0.7: generations are plain texts
    return response.text if wrapped is not None and isinstance(response, wrapped) else response


def _failed(response) -> bool:
    return response_failure(response) is not None


def _status(response) -> str | None:
    failure = response_failure(response)
    return None if failure is None else failure.status


def _flag(value, name: str) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"medhorizon_resume: model arg {name}: expected true or false, got {value!r}")
