"""The three protocols as VLMEvalKit video datasets: one class per benchmark, one ``--data`` name per preset.

A thin shell around :mod:`.protocols` (which calls the benchmark functions the
lmms-eval hooks call):

* ``prepare_dataset`` writes a small TSV (``index, uid, question, video,
  answer, category``) for VLMEvalKit to iterate; the items stay in memory,
  loaded with the benchmark's own reader. ``index`` is the position in that
  list, the order in which lmms-eval sees its docs, so ``--limit N`` selects
  the same items in both frameworks (VLMEvalKit 0.0.20 ignores ``--limit`` for
  video datasets; these datasets apply it);
* ``build_prompt`` returns the planned frames as PNG files, then the prompt (Sureon: each frame right after
  its timestamp, between the clip's range and the question: ``protocols.SureonProtocol.message``).
  Every model gets the frames as images, ``VIDEO_LLM`` or not: the protocol,
  not the model, decides which frames are seen. The item's video outcome is
  appended to the prediction file's :class:`~.frames.OutcomeLog`;
* ``evaluate`` reads the predictions losslessly (TSV only), joins the video
  outcomes, and writes the records and the report (:mod:`.outputs`); the model's
  raw text goes to the scorers untouched (no reasoning-tag stripping here: the
  scorers apply the package's one rule, in both frameworks).

``TYPE`` is ``"Video-Protocol"`` on purpose: with ``Video-MCQ`` some models
append their own answer format to the prompt and VLMEvalKit picks an OpenAI
judge. Constructors take ``**kwargs`` because ``run.py`` passes every
command-line argument; the frame setting comes from the preset name only.
"""

from __future__ import annotations

import csv
import io
import logging
import threading
from pathlib import Path

import numpy as np
import pandas as pd
from vlmeval.dataset.video_base import VideoBaseDataset
from vlmeval.smp import LMUDataRoot, get_rank_and_world_size

from ...core.errors import MedHorizonError
from ...core.safeio import atomic_write_bytes, atomic_write_jsonl, atomic_write_text
from ...core.text import report_json
from ...core.video.ahead import ahead
from .frames import FrameStore, OutcomeLog, outcome_log_path
from .outputs import read_predictions, records_path, report_path
from .presets import PRESETS, presets_of
from .protocols import PROTOCOLS, Protocol, protocol_for

__all__ = ["ProtocolDataset", "MedHorizonDataset", "SureonDataset", "SurgHiBenchDataset", "DATASET_CLASSES"]

log = logging.getLogger(__name__)


def _row_index(line) -> int:
    """VLMEvalKit's loop passes a row position; a model's custom-prompt path passes the row."""
    if isinstance(line, (int, np.integer)):
        return int(line)
    return int(line["index"])


def _positive(value) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


class ProtocolDataset(VideoBaseDataset):
    TYPE = "Video-Protocol"
    MODALITY = "VIDEO"
    BENCHMARK = ""
    #: ``--limit`` for datasets built from ``--config`` (run.py passes its arguments only to ``--data`` datasets)
    default_limit: int | None = None

    def __init__(self, dataset: str = "", nframe: int = 0, fps: float = -1, **kwargs):
        preset = PRESETS.get(dataset)
        if preset is None or preset.benchmark != self.BENCHMARK:
            raise MedHorizonError(f"{type(self).__name__}: unknown dataset {dataset!r}; one of "
                                  f"{', '.join(self.supported_datasets())}")
        self.protocol: Protocol = protocol_for(preset)
        budget = self.protocol.frame_budget()
        self._check_sampling_args(nframe, fps, budget)
        super().__init__(dataset=dataset, pack=False, nframe=budget or 0, fps=-1 if budget else 1.0)
        limit = _positive(kwargs.get("limit")) or _positive(self.default_limit)
        if limit:
            self.data = self.data.iloc[:limit]
        self.store = FrameStore.from_env(Path(LMUDataRoot()) / "medhorizon_tasks" / "frames")
        self.outcome_log: OutcomeLog | None = None  # set per model by register._with_outcome_log
        self._outcomes: dict[str, str | None] = {}  # this process's, for runs that set no log
        self._ahead = None       # the prompts of this rank's next rows, prepared ahead (see _prompt)
        self._ahead_next = -1
        self._ahead_lock = threading.Lock()

    def __getstate__(self):
        state = dict(self.__dict__)  # a process pool gets the dataset without the look-ahead (threads, a generator)
        state.update(_ahead=None, _ahead_next=-1, _ahead_lock=None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._ahead_lock = threading.Lock()

    @classmethod
    def supported_datasets(cls):
        return presets_of(cls.BENCHMARK)

    def _check_sampling_args(self, nframe, fps, budget) -> None:
        """``nframe`` / ``fps`` of a ``--config`` entry (VLMEvalKit requires one): the preset fixes them."""
        nframe = _positive(nframe)
        fps = float(fps) if fps is not None and float(fps) > 0 else None
        if (nframe and nframe != budget) or (fps and (budget or fps != 1.0)):
            want = f"nframe={budget}" if budget else "fps=1"
            raise MedHorizonError(f"{self.protocol.preset.name}: the protocol fixes the frames ({want}); got "
                                  f"nframe={nframe or 0}, fps={fps or -1}; choose another preset instead")

    def prepare_dataset(self, dataset):
        rows = [{"index": i, **self.protocol.tsv_fields(u)} for i, u in enumerate(self.protocol.units)]
        frame = pd.DataFrame(rows, columns=["index", "uid", "question", "video", "answer", "category"])
        buf = io.StringIO()
        frame.to_csv(buf, sep="\t", index=False, quoting=csv.QUOTE_ALL)
        path = Path(LMUDataRoot()) / "medhorizon_tasks" / f"{dataset}.tsv"
        atomic_write_bytes(path, buf.getvalue().encode("utf-8"))  # ranks build at once: never a half file
        return {"root": str(self.protocol.source.video_root), "data_file": str(path)}

    def _prompt(self, row: int):
        """The protocol's prompt of ``row``; the rows VLMEvalKit's loop asks for next (this rank's share:
        every ``world_size``-th row) are decoded and written meanwhile, on worker threads
        (:func:`~medhorizon_tasks.core.video.ahead.ahead`), while the model answers this one. Asked for another
        row than the one expected (rows answered before are skipped), it starts again from there. Called from
        several threads at once (VLMEvalKit builds an API model's prompts in a thread pool), the others build
        their prompt directly."""
        if not self._ahead_lock.acquire(blocking=False):
            return self.protocol.prompt(self.protocol.units[row], self.store)
        try:
            return self._prompt_ahead(row)
        finally:
            self._ahead_lock.release()

    def _prompt_ahead(self, row: int):
        if self._ahead is None or row != self._ahead_next:
            if self._ahead is not None:
                self._ahead.close()
            stride = max(1, get_rank_and_world_size()[1])
            units = self.protocol.units
            self._stride = stride
            self._ahead = ahead(range(row, len(units), stride), lambda j: self.protocol.prompt(units[j], self.store),
                                nbytes=lambda _: 0)  # frames go to files: the count bounds what is held
        done = next(self._ahead)
        self._ahead_next = row + self._stride
        if done.error is not None:
            raise done.error
        return done.value

    def build_prompt(self, line, video_llm=False):
        unit = self.protocol.units[_row_index(line)]
        text, frames, error = self._prompt(_row_index(line))
        if self.protocol.shows_frames:
            uid = self.protocol.uid(unit)
            if error:
                log.warning(f"[{self.dataset_name}] {error}")
            self._outcomes[uid] = error
            if self.outcome_log is not None:
                self.outcome_log.record(uid, error, len(frames))
        return self.protocol.message(unit, text, frames)

    def _video_error(self, unit, logged: dict[str, str | None]) -> str | None:
        """The unit's video error when its prompt was built. Unrecorded (predictions made elsewhere): the plan is
        prepared and decoded now (once: the frame store keeps it), as the lmms-eval hooks do for a response of
        lmms-eval's own cache."""
        if not self.protocol.shows_frames:
            return None
        uid = self.protocol.uid(unit)
        if uid in logged:
            return logged[uid]
        if uid in self._outcomes:
            return self._outcomes[uid]
        log.warning(f"[{self.dataset_name}] no video outcome recorded for item {uid}; checking its video now")
        return self.protocol.prompt(unit, self.store)[2]

    def evaluate(self, eval_file, **judge_kwargs):
        predictions = read_predictions(eval_file)
        logged = OutcomeLog(outcome_log_path(eval_file)).read()
        judge = self.protocol.judge(judge_kwargs, Path(eval_file))
        units = [self.protocol.units[int(i)] for i in self.data["index"]]
        records = []
        for index, unit in zip(self.data["index"], units):
            raw = predictions.get(int(index))
            error = self._video_error(unit, logged) if raw is not None else None
            record = self.protocol.record(unit, raw, error, judge=judge)
            if record is not None:
                records.append(record)
        report = self.protocol.report(units, records, Path(eval_file))
        atomic_write_jsonl(records_path(eval_file), records)
        atomic_write_text(report_path(eval_file), report_json(report) + "\n")
        return self.protocol.metrics(report)

    @classmethod
    def report_primary_metric(cls, metrics):
        key = PROTOCOLS[cls.BENCHMARK].PRIMARY_METRIC
        value = (metrics or {}).get(key)
        return {key: value} if isinstance(value, (int, float)) and value == value else {}


class MedHorizonDataset(ProtocolDataset):
    """MedHorizon: four-way MCQs over full-length clinical videos (visual caps, text, oracle, diagnostics)."""

    BENCHMARK = "medhorizon"


class SureonDataset(ProtocolDataset):
    """Sureon, visual and blind. ``--judge <model>`` (``--judge-base-url``, ``--judge-key``, else
    ``MEDHORIZON_JUDGE_*``) judges the SM summaries with the package's strict judge; they never enter mu.
    The visual report has the multimodal gain when the model's blind records lie beside it."""

    BENCHMARK = "sureon"


class SurgHiBenchDataset(ProtocolDataset):
    """SurgHiBench phase/step recognition, one question per evaluated frame."""

    BENCHMARK = "surghi"


DATASET_CLASSES = (MedHorizonDataset, SureonDataset, SurgHiBenchDataset)
