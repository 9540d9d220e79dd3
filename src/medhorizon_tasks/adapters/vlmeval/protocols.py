"""What a VLMEvalKit dataset of each benchmark does, without VLMEvalKit: load, prompt, score, report.

One :class:`Protocol` per benchmark, built from a :class:`~.presets.Preset`. It
calls the benchmark functions the lmms-eval task hooks call
(``adapters/lmms_eval/{medhorizon,sureon,surghi}.py``):

=============  =====================================  ===================================  =======================
benchmark      data                                   model input                          output -> record/report
=============  =====================================  ===================================  =======================
MedHorizon     ``release.load_release``               ``protocol.prepare``,                :func:`scoring.record_for`,
                                                      ``decode_frames``, ``build_prompt``  ``scoring.report``
Sureon         ``items.load_items``                   ``protocol.prepare``,                :func:`scoring.record_for`,
                                                      ``decode_frames``, ``build_prompt``  ``scoring.report``
SurgHiBench    ``frames.read_frame_rows``,            ``protocol.prepare``,                :func:`scoring.frame_record`,
               ``resolve_hierarchies``                ``decode_frames``, ``build_prompt``  :func:`scoring.records_report`
=============  =====================================  ===================================  =======================

A video error is caught exactly where the lmms-eval hooks catch it: a failing
``prepare`` gives the prompt without the frame line, a failing decode the
prompt with it; either way the model gets no frames and the item is scored as
a video error. The frames themselves go through a :class:`~.frames.FrameStore`.
"""

from __future__ import annotations

from pathlib import Path

from ...benchmarks.medhorizon import protocol as medhorizon_protocol
from ...benchmarks.medhorizon import scoring as medhorizon_scoring
from ...benchmarks.medhorizon.release import load_release
from ...benchmarks.medhorizon.scoring import record_for as medhorizon_record
from ...benchmarks.standard import setting_departures
from ...benchmarks.sureon import protocol as sureon_protocol
from ...benchmarks.sureon import scoring as sureon_scoring
from ...benchmarks.sureon.items import load_items
from ...benchmarks.sureon.scoring import record_for as sureon_record
from ...benchmarks.surghi import protocol as surghi_protocol
from ...benchmarks.surghi.frames import load_hierarchy_file, read_frame_rows, resolve_hierarchies
from ...benchmarks.surghi.scoring import frame_record as surghi_record
from ...benchmarks.surghi.scoring import records_report as surghi_report
from ...core.errors import VideoError
from ...core.responses import OOM, REFUSED, REQUEST_ERROR, TRUNCATED
from ...core.video.prepared import frame_size
from ...core.video.size import PixelBudget
from .frames import FrameStore
from .outputs import records_path
from .presets import Preset
from .sources import DataSource, locate

__all__ = ["Protocol", "MedHorizonProtocol", "SureonProtocol", "SurgHiBenchProtocol", "protocol_for"]


class Protocol:
    """A preset's units (items, or frames for SurgHiBench) and how each is prompted and scored."""

    PRIMARY_METRIC = ""

    def __init__(self, preset: Preset, source: DataSource | None = None):
        self.preset = preset
        self.source = source if source is not None else locate(preset)
        self.units = self.load_units()

    @property
    def shows_frames(self) -> bool:
        return self.preset.shows_frames

    @property
    def mode(self) -> str:
        return str(self.preset.kwargs.get("mode", "visual"))

    def uid(self, unit) -> str:
        return unit.uid

    def frame_budget(self) -> int | None:
        """A fixed number of frames (VLMEvalKit's ``nframe``), or None (a rate: ``fps=1``)."""
        return None

    def judge(self, judge_kwargs: dict, prediction_file: Path):
        """A judge for outputs the rules cannot score (Sureon's summaries), from VLMEvalKit's judge arguments."""
        return None

    def _frames(self, store: FrameStore, video, max_side, decode) -> tuple[list[str], str | None]:
        try:
            return store.frame_files(video.path, video.plan, max_side, decode), None
        except VideoError as exc:
            return [], str(exc)

    # per benchmark
    def load_units(self) -> list:
        raise NotImplementedError

    def tsv_fields(self, unit) -> dict:
        """``uid, question, video, answer, category`` for VLMEvalKit's table (shown, never read back)."""
        raise NotImplementedError

    def prompt(self, unit, store: FrameStore) -> tuple[str, list[str], str | None]:
        """``(prompt text, frame files in the order shown, video error or None)``."""
        raise NotImplementedError

    def message(self, unit, text: str, files: list[str]) -> list[dict]:
        """VLMEvalKit's message for a prompt built by :meth:`prompt`: the frames, then the text."""
        return [*(dict(type="image", value=f) for f in files), dict(type="text", value=text)]

    def record(self, unit, raw: str | None, error: str | None, *, judge=None) -> dict | None:
        """The unit's record; ``raw`` None: no prediction (None when the report counts that itself)."""
        raise NotImplementedError

    def report(self, units: list, records: list[dict], prediction_file: Path | None = None) -> dict:
        raise NotImplementedError

    def metrics(self, report: dict) -> dict:
        """Flat numbers for VLMEvalKit's ``status.json`` and log (the report file has everything)."""
        raise NotImplementedError


class MedHorizonProtocol(Protocol):
    PRIMARY_METRIC = "accuracy"

    @property
    def setting(self) -> medhorizon_protocol.FrameSetting:
        return medhorizon_protocol.FrameSetting.from_kwargs(self.preset.kwargs)

    @property
    def mode(self) -> str:
        return self.setting.mode

    def load_units(self):
        return load_release(self.source.data)

    def frame_budget(self):
        return self.setting.frames

    def tsv_fields(self, item):
        return {"uid": item.uid, "question": item.question, "video": item.video_path, "answer": item.answer,
                "category": item.task}

    def prompt(self, item, store):
        setting = self.setting
        if not setting.shows_frames:
            return medhorizon_protocol.build_prompt(item), [], None
        try:
            video = medhorizon_protocol.prepare(item, setting, self.source.video_root)
        except VideoError as exc:
            return medhorizon_protocol.build_prompt(item), [], str(exc)
        text = medhorizon_protocol.build_prompt(item, video.plan, video.duration_s, times=setting.shows_times)
        files, error = self._frames(store, video, frame_size(video, setting.size_rule),
                                    lambda: medhorizon_protocol.decode_frames(video, setting, item.uid))
        return text, files, error

    def record(self, item, raw, error, *, judge=None):
        if raw is None:
            return medhorizon_scoring.missing_record(item, self.mode)
        shown = None if error else medhorizon_protocol.frames_shown(item, self.setting, self.source.video_root)
        return medhorizon_record(item, raw, self.mode, error, shown, setting_departures(self.setting))

    def report(self, items, records, prediction_file=None):
        return medhorizon_scoring.report(records)

    def metrics(self, report):
        o = report["overall"]
        beside = f"accuracy_{medhorizon_scoring.BESIDE[report['extraction']]}"  # the authors' rule's accuracy
        out = {k: o[k] for k in ("accuracy", "correct", "n", "invalid", "missing", "errors", "request_errors",
                                 "refused", "truncated", "oom", beside, "rules_disagree")}
        out.update({f"accuracy_{code}": s["accuracy"] for code, s in report["by_task"].items()})
        return out


class SureonProtocol(Protocol):
    PRIMARY_METRIC = "mu"

    def __init__(self, preset: Preset, source: DataSource | None = None):
        super().__init__(preset, source)
        self._parts: dict[str, list[str | int]] = {}  # uid -> the interleaved prompt of its planned frames

    @property
    def blur(self) -> bool:
        """The visual mode's blurring pass: the preset's ``blur``, else ``$SUREON_BLUR``, else on."""
        return self.mode == "visual" and sureon_protocol.blur_enabled(self.preset.kwargs.get("blur"))

    def load_units(self):
        return load_items(self.source.data)

    def tsv_fields(self, item):
        answer = " > ".join(item.answer) if isinstance(item.answer, tuple) else (item.answer or "")
        return {"uid": item.uid, "question": item.question, "video": item.video_path, "answer": answer,
                "category": item.category}

    def prompt(self, item, store):
        if self.mode != "visual":
            return sureon_protocol.build_prompt(item), [], None
        try:
            video = sureon_protocol.prepare(item, self.source.video_root, blur=self.blur)
        except VideoError as exc:
            return sureon_protocol.build_prompt(item), [], str(exc)
        files, error = self._frames(store, video, frame_size(video, PixelBudget()),
                                    lambda: sureon_protocol.decode_frames(video, item.uid))
        self._parts[item.uid] = sureon_protocol.prompt_parts(item, video.plan)
        return sureon_protocol.build_prompt(item, video.plan), files, error

    def message(self, item, text, files):
        """Fig. 17: the frames interleaved with their timestamps (:func:`sureon_protocol.prompt_parts`), the clip's
        range first, the question and options last; blind (or a clip whose frames failed): the text alone."""
        parts = self._parts.get(item.uid) if files else None
        if parts is None:
            return super().message(item, text, files)
        return [dict(type="image", value=files[p]) if isinstance(p, int) else dict(type="text", value=p)
                for p in parts]

    def record(self, item, raw, error, *, judge=None):
        if raw is None:
            return sureon_scoring.missing_record(item, self.mode)
        return sureon_record(item, raw, self.mode, error, judge=judge if item.kind == "sm" else None,
                             departures=sureon_protocol.departures(self.mode, self.blur))

    def judge(self, judge_kwargs, prediction_file):
        """The package's strict judge (:mod:`medhorizon_tasks.core.judge`) for the SM summaries when ``--judge <model>``
        names the model an OpenAI-compatible server serves (``--judge-base-url`` / ``--judge-key``, else
        ``MEDHORIZON_JUDGE_BASE_URL`` / ``MEDHORIZON_JUDGE_API_KEY``); verdicts cached beside the predictions."""
        model = judge_kwargs.get("model")
        if not model or model == "exact_matching":
            return None
        from ...core.judge import Judge, JudgeConfig

        config = JudgeConfig.from_env(model=model, base_url=judge_kwargs.get("api_base"),
                                      api_key=judge_kwargs.get("key"))
        return Judge(config, cache_path=prediction_file.with_name(prediction_file.stem + "_judge_cache.jsonl"))

    def report(self, items, records, prediction_file=None):
        blind = self._blind_records(prediction_file, records) if prediction_file is not None else None
        return sureon_scoring.report(records, blind_records=blind)

    def _blind_records(self, prediction_file: Path, records: list[dict]) -> list[dict] | None:
        """The same model's blind records beside a visual prediction file, for the multimodal gain."""
        name = self.preset.name
        stem = Path(prediction_file).stem
        if self.mode != "visual" or not stem.endswith(name):
            return None
        blind_name = name[: name.rindex("_visual")] + "_blind"  # Sureon[_Synthetic]_visual[_noblur]
        blind_file = Path(prediction_file).with_name(stem[: -len(name)] + blind_name + ".tsv")
        path = records_path(blind_file)
        if not path.exists():
            return None
        from ...core.jsonl import iter_jsonl

        blind = [rec for _, rec in iter_jsonl(path)]
        scored = lambda recs: {str(r["uid"]) for r in recs if r.get("kind") != "sm"}  # noqa: E731
        return blind if scored(blind) == scored(records) else None  # another --limit: not comparable

    def metrics(self, report):
        failed = [f["status"] for f in report["failed_responses"]]
        out = {"mu": report["mu"]["accuracy"], "n": report["mu"]["n"],
               "perception": report["perception"]["accuracy"], "reasoning": report["reasoning"]["accuracy"],
               "errors": len(report["video_errors"]), "missing": len(report["missing"]),
               "request_errors": failed.count(REQUEST_ERROR), "refused": failed.count(REFUSED),
               "truncated": failed.count(TRUNCATED), "oom": failed.count(OOM),
               "sm_accuracy": report["sm"]["accuracy"], "sm_not_judged": report["sm"]["not_judged"]}
        out.update({f"accuracy_{c}": s["accuracy"] for c, s in report["by_category"].items()})
        if "mg" in report:
            out["mg"] = report["mg"]["overall"]
            if "SM" in report["mg"]["by_category"]:
                out["mg_sm"] = report["mg"]["by_category"]["SM"]
        return out


class SurgHiBenchProtocol(Protocol):
    PRIMARY_METRIC = "multi_level"

    def load_units(self):
        rows = read_frame_rows(self.source.data, role="items")
        given = load_hierarchy_file(self.source.hierarchy) if self.source.hierarchy else None
        self.hierarchies = resolve_hierarchies(rows, given)
        return rows

    @property
    def shows_frames(self) -> bool:
        return True

    @property
    def window(self) -> dict:
        kw = self.preset.kwargs
        return {"half_width_s": float(kw.get("window_half_width_s", surghi_protocol.DEFAULT_HALF_WIDTH_S)),
                "fps": float(kw.get("window_fps", surghi_protocol.DEFAULT_FPS))}

    def tsv_fields(self, row):
        return {"uid": row.uid, "question": f"phase and step at {float(row.timestamp_s or 0):.1f} s",
                "video": row.video_path, "answer": f"{row.phase} / {row.step}", "category": row.dataset}

    def prompt(self, row, store):
        hierarchy = self.hierarchies[row.dataset][0]
        try:
            video = surghi_protocol.prepare(row, self.source.video_root, **self.window)
        except VideoError as exc:
            return surghi_protocol.build_prompt(row, hierarchy), [], str(exc)
        files, error = self._frames(store, video, frame_size(video, PixelBudget()),
                                    lambda: surghi_protocol.decode_frames(video, row.uid))
        return surghi_protocol.build_prompt(row, hierarchy, video.plan), files, error

    def record(self, row, raw, error, *, judge=None):
        if raw is None:
            return None  # the report counts an annotated frame without a record as missing
        return surghi_record(row, raw, self.hierarchies[row.dataset][0], error)

    def report(self, rows, records, prediction_file=None):
        return surghi_report(rows, records, self.hierarchies)

    def metrics(self, report):
        o = report["overall"]
        keep = ("phase_acc", "phase_f1", "step_acc", "step_f1", "multi_level", "both_wrong", "both_right",
                "step_given_phase", "sibling", "cousin", "semantic_step", "n_missing", "n_errors", "n_request_errors",
                "n_refused", "n_truncated", "n_oom")
        return {k: (None if isinstance(o.get(k), float) and o[k] != o[k] else o.get(k)) for k in keep}


PROTOCOLS = {"medhorizon": MedHorizonProtocol, "sureon": SureonProtocol, "surghi": SurgHiBenchProtocol}


def protocol_for(preset: Preset, source: DataSource | None = None) -> Protocol:
    return PROTOCOLS[preset.benchmark](preset, source)
