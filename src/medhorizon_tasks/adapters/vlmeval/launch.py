"""``medhorizon-tasks vlmeval <VLMEvalKit run arguments>``: VLMEvalKit's own ``run.py`` with this package in it.

What it does around VLMEvalKit's ``run.py`` ``main()`` (run in this process, so that the
registration is seen; ``vlmeval.run`` in ms-vlmeval, the checkout's root ``run.py`` in a git install:
:mod:`.versions`):

1. refuses (exit status 2; the pre-flight before VLMEvalKit is imported) when the pre-flight of a
   release dataset fails -- the lmms-eval path's check and message
   (``MEDHORIZON_ALLOW_VIDEO_ERRORS=1`` to run anyway) -- or when the work dir
   holds predictions VLMEvalKit would reuse that another package, data or video
   version made (:mod:`.stamp`), or when another launcher holds the folder of
   one of its models (``<work-dir>/<model>``, held for the whole run:
   :func:`~medhorizon_tasks.runs.launch.own_outputs`), or when VLMEvalKit
   cannot be imported (one line naming the missing module and its install line,
   before any folder is held); two installed providers of ``vlmeval`` are named in
   one line, with the one that runs;
2. registers the datasets and probe models (:mod:`.register`), forces
   lossless TSV predictions (``PRED_FORMAT=tsv``) and rule-based extraction
   (``--judge exact_matching`` unless ``--judge`` is given), and uses ``gloo``
   when no GPU is visible;
3. runs VLMEvalKit, then reads what it wrote -- ``status.json`` and, for this
   package's datasets, the records and report ``evaluate`` wrote in this run --
   and exits non-zero with one line per reason
   (:class:`~medhorizon_tasks.runs.launch.Verdict`), since VLMEvalKit exits 0
   when a dataset fails (a stamp beside the predictions that is no longer this
   run's is a reason too); before the verdict, one line per MedHorizon dataset gives its
   accuracy under the default and the authors' answer rules and the items they
   read differently (:func:`medhorizon_accuracies`).

Several processes: ``torchrun --nproc-per-node N -m
medhorizon_tasks.adapters.vlmeval.launch <arguments>`` (every rank runs the
checks; rank 0 holds the model folders, writes the stamps and gives the verdict).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
from pathlib import Path

from ...core.errors import DataError, MedHorizonError
from ...core.jsonl import iter_jsonl
from ...core.predictions import failed_responses
from ...core.safeio import read_json
from ...runs.launch import EXIT_REFUSED, RUN_LOCK, OutputsInUse, RunStart, Verdict, last_error, own_outputs
from .presets import PRESETS, Preset

__all__ = ["run_cli", "judge_vlmeval_run", "medhorizon_accuracies", "HELP"]

OUR_CLASSES = {"MedHorizonDataset", "SureonDataset", "SurgHiBenchDataset"}
#: this package's VLMEvalKit models (:data:`.models.MODELS`, named here without importing VLMEvalKit), their
#: ``--config`` classes, and what each of their options can be
OUR_MODELS = ("medhorizon_random", "medhorizon_needle")
OUR_MODEL_CLASSES = ("MedHorizonRandomProbe", "MedHorizonNeedleProbe")
_OUR_DATASET_PREFIXES = ("medhorizon", "sureon", "surghi")


def _arguments(argv: list[str]) -> argparse.Namespace:
    """The few of VLMEvalKit's arguments the launcher needs (the rest go to VLMEvalKit untouched)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--data", nargs="+", default=None)
    p.add_argument("--model", nargs="+", default=None)
    p.add_argument("--config", default=None)
    p.add_argument("--work-dir", default="./outputs")
    p.add_argument("--mode", default="all")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--judge", default=None)
    p.add_argument("--api-mode", action="store_true")
    p.add_argument("--base-url", default=None)
    args, _ = p.parse_known_args(argv)
    return args


def _did_you_mean(name: str, known) -> str:
    import difflib

    near = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(near)}?)" if near else ""


def our_names_problem(args: argparse.Namespace, models: list[str], datasets: dict) -> str | None:
    """Before anything is imported: ``--limit`` 0 or negative (VLMEvalKit would run every item), a dataset
    named like this package's (``MedHorizon_...``, ``Sureon_...``, ``SurgHiBench...``) that is none of its
    presets, a model named like its probes (``medhorizon_...``) that is neither, or an option of a probe in
    ``--config`` that the probe does not take or a value it cannot be. One line, or None."""
    from ...runs.launch import limit_problem

    problem = limit_problem(args.limit)
    if problem:
        return problem
    for name, preset in datasets.items():
        if preset is None and name.lower().startswith(_OUR_DATASET_PREFIXES) and not _configured(args, "data", name):
            return (f"--data {name}: unknown dataset{_did_you_mean(name, PRESETS)}; `medhorizon-tasks vlmeval "
                    f"--help` lists this package's datasets")
    for name in models:
        if name.lower().startswith("medhorizon") and name not in OUR_MODELS and not _configured(args, "model", name):
            return f"--model {name}: unknown model{_did_you_mean(name, OUR_MODELS)}; this package's: " + \
                ", ".join(OUR_MODELS)
    return _probe_options_problem(args)


def _config(args: argparse.Namespace) -> dict:
    try:
        cfg = read_json(args.config) if args.config else {}
    except DataError:
        return {}
    return cfg if isinstance(cfg, dict) else {}


def _configured(args: argparse.Namespace, part: str, name: str) -> bool:
    """Whether ``--config`` builds ``name`` from a class of its own (VLMEvalKit then needs no registered name)."""
    entry = (_config(args).get(part) or {}).get(name)
    return isinstance(entry, dict) and "class" in entry


def _probe_options_problem(args: argparse.Namespace) -> str | None:
    """A ``--config`` entry of this package's probes with an option they do not take or a value it cannot be."""
    from ..lmms_eval.model_args import SPECS

    spec = SPECS["medhorizon_needle"]  # the same options as the lmms-eval probes, less delay_s
    takes = ("seed", "record_path")
    for name, entry in (_config(args).get("model") or {}).items():
        if not isinstance(entry, dict) or entry.get("class") not in OUR_MODEL_CLASSES:
            continue
        for key, value in entry.items():
            if key == "class":
                continue
            if key not in takes:
                return (f"--config model {name}: {entry['class']} takes no option {key!r}"
                        f"{_did_you_mean(key, takes)}; it takes {', '.join(takes)}")
            why = spec.arg(key).problem(value)
            if why:
                return f"--config model {name}: option {key}={value!r}: {why}"
    return None


def framework_names_problem(args: argparse.Namespace, models: list[str], datasets: dict) -> str | None:
    """After VLMEvalKit is imported (and this package registered in it), before it runs: a model or dataset
    name it does not know. Models with ``--base-url`` (an API model of any name) and entries ``--config`` builds
    from a class are VLMEvalKit's to judge."""
    import vlmeval.config
    import vlmeval.dataset
    from vlmeval.dataset.video_dataset_config import supported_video_datasets
    from vlmeval.smp import LMUDataRoot

    if args.base_url is None:
        for name in models:
            if name not in vlmeval.config.supported_VLM and not _configured(args, "model", name):
                return (f"--model {name}: unknown to VLMEvalKit{_did_you_mean(name, vlmeval.config.supported_VLM)}; "
                        "its models are vlmeval.config.supported_VLM")
    # build_dataset's own order: a video dataset, a class's dataset, else a custom <LMUData>/<name>.tsv
    known = set(supported_video_datasets) | {n for cls in vlmeval.dataset.DATASET_CLASSES
                                             for n in cls.supported_datasets()}
    for name in datasets:
        if name not in known and not _configured(args, "data", name) and \
                not (Path(LMUDataRoot()) / f"{name}.tsv").exists():
            return (f"--data {name}: unknown to VLMEvalKit{_did_you_mean(name, known)} and no "
                    f"{Path(LMUDataRoot()) / (name + '.tsv')}; its datasets are vlmeval.dataset.SUPPORTED_DATASETS")
    return None


def _requested(args: argparse.Namespace) -> tuple[list[str], dict[str, Preset | None]]:
    """``(model names, dataset name -> our preset or None for another dataset)``."""
    if args.config:
        source = str(args.config)
        cfg = read_json(args.config)  # DataError names the file, line and field
        if not isinstance(cfg, dict):
            raise DataError("a VLMEvalKit --config is a JSON object with \"model\" and \"data\"", source=source)
        for part in ("model", "data"):
            if not isinstance(cfg.get(part) or {}, dict):
                raise DataError(f"field {part!r}: must be an object of name -> settings", source=source)
        models = list((cfg.get("model") or {}).keys())
        datasets: dict[str, Preset | None] = {}
        for name, entry in (cfg.get("data") or {}).items():
            entry = entry or {}
            if not isinstance(entry, dict):
                raise DataError(f"field 'data.{name}': must be an object of settings", source=source)
            if isinstance(entry.get("class"), str) and entry["class"] in OUR_CLASSES:
                datasets[name] = PRESETS.get(str(entry.get("dataset")))
                if datasets[name] is None:
                    raise DataError(f"field 'data.{name}.dataset': unknown dataset {entry.get('dataset')!r} for "
                                    f"class {entry['class']} (one of: MedHorizon_cap64, Sureon_visual, ...)",
                                    source=source)
            else:
                datasets[name] = PRESETS.get(name) if not entry else None
        return models, datasets
    return list(args.model or []), {name: PRESETS.get(name) for name in (args.data or [])}


def _rank() -> int:
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


def _say(message: str) -> None:
    """To stderr, once: every rank of a torchrun job runs the same checks and reaches the same verdict."""
    if _rank() == 0:
        print(message, file=sys.stderr)


def _preflight(ours: dict[str, Preset]) -> int | None:
    """The pre-flight of the release datasets asked for (text-only ones need no videos); Sureon's visual
    datasets, synthetic ones included, also need the blurring pass's detectors unless it is off."""
    needed: dict[str, bool] = {}
    for p in ours.values():
        if not p.synthetic:
            needed[p.benchmark] = needed.get(p.benchmark, False) or p.shows_frames
    from ...runs.preflight import stop_unless_blur_ready, stop_unless_ready

    try:
        stop_unless_blur_ready([p.kwargs.get("blur") for p in ours.values()
                                if p.benchmark == "sureon" and p.shows_frames])
        stop_unless_ready(needed)
    except SystemExit as stop:
        return int(stop.code or 0) or None
    return None


def run_cli(argv: list[str]) -> int:
    """``medhorizon-tasks vlmeval <VLMEvalKit arguments>``; the exit status of :class:`Verdict`."""
    if not argv or argv[0] in ("-h", "--help"):
        print(HELP)
        return 0 if argv else EXIT_REFUSED
    args = _arguments(argv)
    try:
        models, datasets = _requested(args)
    except MedHorizonError as exc:
        print(f"medhorizon-tasks vlmeval: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if not models or not datasets:
        print("medhorizon-tasks vlmeval: error: name the models and datasets (--model ... --data ..., or --config "
              "FILE), e.g. --model medhorizon_needle --data MedHorizon_Synthetic_cap64", file=sys.stderr)
        return EXIT_REFUSED
    problem = our_names_problem(args, models, datasets)
    if problem:
        print(f"medhorizon-tasks vlmeval: error: {problem}", file=sys.stderr)
        return EXIT_REFUSED
    ours = {name: p for name, p in datasets.items() if p is not None}
    stopped = _preflight(ours)
    if stopped:
        return stopped
    work_dir = Path(os.environ.get("MMEVAL_ROOT") or args.work_dir)
    folders = [work_dir / model for model in dict.fromkeys(models)] if _rank() == 0 else []
    found = {f: (f.is_dir(), (f / RUN_LOCK).exists()) for f in folders}
    try:
        with contextlib.ExitStack() as held:
            # the job's rank 0 holds the folders for every rank of it, first: a second launcher on the same
            # folders is refused at once, not after VLMEvalKit's import
            for folder in folders:
                held.enter_context(own_outputs(folder, "medhorizon-tasks vlmeval " + " ".join(argv),
                                               option="--work-dir"))
            problem = _load_framework()
            if not problem:
                return _run_held(args, argv, work_dir, models, datasets, ours)
    except OutputsInUse as exc:
        _say(f"medhorizon-tasks vlmeval: error: {exc}")
        return EXIT_REFUSED
    _leave_as_found(found)
    _say(f"medhorizon-tasks vlmeval: error: {problem}")
    return EXIT_REFUSED


def _leave_as_found(found: dict[Path, tuple[bool, bool]]) -> None:
    """After a run that never started (VLMEvalKit could not be imported): the lock files this launcher made are
    removed, and the folders it made, left empty, too; nothing else is touched."""
    for folder, (was_dir, had_lock) in found.items():
        if not had_lock:
            with contextlib.suppress(OSError):
                (folder / RUN_LOCK).unlink()
        if not was_dir:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty


def _load_framework() -> str | None:
    """VLMEvalKit imported and this package registered in it, before any folder is held; one line when it cannot
    be imported. Two installed providers of ``vlmeval`` are said (which one runs), not refused."""
    from .versions import import_problem, shadow_problem

    shadowed = shadow_problem()
    if shadowed:
        _say(f"medhorizon-tasks vlmeval: warning: {shadowed}")
    from .register import register

    try:
        register()
    except ImportError as exc:
        return import_problem(exc)
    return None


def _run_held(args: argparse.Namespace, argv: list[str], work_dir: Path, models: list[str],
              datasets: dict[str, Preset | None], ours: dict[str, Preset]) -> int:
    """The run, its model folders held: refuse unknown names and stale predictions, stamp, run VLMEvalKit, judge
    it."""
    try:
        from .stamp import expected_stamp, stale_problems, write_stamps

        runs = {name: (p, expected_stamp(p, args.limit, progress=_rank() == 0)) for name, p in ours.items()}
        problems = [] if args.api_mode else stale_problems(work_dir, models, runs)
    except MedHorizonError as exc:
        print(f"medhorizon-tasks vlmeval: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if problems:
        _say("medhorizon-tasks vlmeval: refusing to run: VLMEvalKit would reuse predictions that this package "
              "version, data and videos did not make:\n" + "\n".join(f"  - {p}" for p in problems)
              + "\nRemove those files or choose another --work-dir.")
        return EXIT_REFUSED
    problem = framework_names_problem(args, models, datasets)
    if problem:
        _say(f"medhorizon-tasks vlmeval: error: {problem}")
        return EXIT_REFUSED
    if _rank() == 0 and not args.api_mode:
        write_stamps(work_dir, models, runs)

    forced = list(argv)
    if args.judge is None:
        forced += ["--judge", "exact_matching"]  # rule-based extraction; VLMEvalKit would pick an OpenAI judge
    if os.environ.get("PRED_FORMAT", "tsv").lower() != "tsv":
        _say(f"medhorizon-tasks vlmeval: PRED_FORMAT={os.environ['PRED_FORMAT']} replaced by tsv (the only "
             "lossless prediction format)")
    os.environ["PRED_FORMAT"] = "tsv"

    from .datasets import ProtocolDataset
    from .register import use_gloo_without_gpu

    use_gloo_without_gpu()
    ProtocolDataset.default_limit = args.limit
    from .versions import run_module

    run = run_module()

    started = RunStart(work_dir)
    crashed = None
    saved_argv = sys.argv
    sys.argv = [saved_argv[0] if saved_argv else "vlmeval", *forced]
    try:
        run.main()
    except SystemExit as stop:  # argparse: a usage error or --help
        if stop.code not in (0, None):
            return EXIT_REFUSED
        return 0
    except Exception as exc:  # noqa: BLE001 - said in the verdict, like every other failure
        crashed = f"{type(exc).__name__}: {exc}"
    finally:
        sys.argv = saved_argv
    if _rank() != 0:
        return 1 if crashed else 0
    verdict = judge_vlmeval_run(work_dir, models, datasets, started, mode=args.mode, crashed=crashed,
                                stamps=None if args.api_mode else {name: want for name, (_, want) in runs.items()})
    for line in medhorizon_accuracies(work_dir, models, datasets, started):
        print(f"medhorizon-tasks: {line}", file=sys.stderr)
    print(verdict.summary(), file=sys.stderr)
    return verdict.exit_code


# ------------------------------------------------------------------ judging a finished run

def _newest_log(work_dir: Path, since: RunStart) -> Path | None:
    logs = [p for p in (work_dir / "logs").glob("*.log") if since.wrote(p)]
    return max(logs, key=lambda p: p.stat().st_mtime) if logs else None


def _status_files(work_dir: Path, model: str) -> list[Path]:
    root = work_dir / model
    return [root / "status.json", *sorted(root.glob("T*/status.json"))]  # flat (local mode), per run (API mode)


def _entry(work_dir: Path, model: str, dataset: str, since: RunStart) -> dict | None:
    """The dataset's entry in the model's newest ``status.json`` that this run updated."""
    best = None
    for path in _status_files(work_dir, model):
        status = _json_object(path)
        datasets = status.get("datasets") if status else None
        entry = datasets.get(dataset) if isinstance(datasets, dict) else None
        if not isinstance(entry, dict):
            continue
        try:
            updated = datetime.datetime.fromisoformat(entry.get("updated_at", "")).timestamp()
        except (TypeError, ValueError):
            continue
        if since.wrote(path) and updated >= since.time - 1 and (best is None or updated > best[0]):
            best = (updated, entry, path)
    return None if best is None else {**best[1], "_status_file": str(best[2])}


def _json_object(path: Path) -> dict | None:
    """A JSON object a run wrote, or None when it is absent or damaged (the verdict then says what is missing)."""
    try:
        value = read_json(path)  # the package's one JSON reader: any bytes -> a value or a DataError
    except DataError:
        return None
    return value if isinstance(value, dict) else None


def _prediction_file(entry: dict | None, work_dir: Path, model: str, dataset: str) -> Path:
    """The predictions TSV of ``model`` x ``dataset`` that the status entry names (else the default name)."""
    root = Path(entry["_status_file"]).parent if entry else work_dir / model
    named = (entry or {}).get("prediction_file")
    if isinstance(named, str) and named:
        # VLMEvalKit writes the path as it made it: relative to its working directory when --work-dir is
        named = Path(named)
        return named if named.is_absolute() or named.exists() else root / named.name
    return root / f"{model}_{dataset}.tsv"


def _our_problems(entry: dict | None, work_dir: Path, model: str, dataset: str, since: RunStart,
                  v: Verdict) -> None:
    """What this package's own outputs say: a report from this run, video errors, items without a prediction."""
    from .outputs import records_path, report_path

    pred = _prediction_file(entry, work_dir, model, dataset)
    if not since.wrote(report_path(pred)):
        v.reasons.append(f"{model} x {dataset} produced no metrics (no report written by this run)")
        return
    report = _json_object(report_path(pred))
    try:
        records = [rec for _, rec in iter_jsonl(records_path(pred))]
    except DataError:
        records = None
    if report is None or records is None or not all(isinstance(r, dict) for r in records):
        v.reasons.append(f"{model} x {dataset}: its report or per-item records are damaged ({report_path(pred)})")
        return
    errors = [r for r in records if r.get("error")]
    if errors:
        v.add_video_errors(f"{model} x {dataset}", len(errors), str(errors[0]["error"]))
    v.add_failed_responses(f"{model} x {dataset}", failed_responses(r for r in records if not r.get("error")))
    overall = report.get("overall") if isinstance(report.get("overall"), dict) else {}
    listed = report.get("missing")
    missing = overall.get("missing") or overall.get("n_missing") or (len(listed) if isinstance(listed, list) else 0)
    if missing:
        v.reasons.append(f"{model} x {dataset}: {missing} item(s) have no prediction")


def medhorizon_accuracies(work_dir: Path, models: list[str], datasets: dict[str, Preset | None],
                          since: RunStart) -> list[str]:
    """One line per MedHorizon dataset this run scored: its accuracy under the default rule and under the
    authors' rule, and the items the two rules read differently (from the report ``evaluate`` wrote)."""
    from ...benchmarks.medhorizon.scoring import rules_line
    from .outputs import report_path

    lines = []
    for model in models:
        for dataset, preset in datasets.items():
            if preset is None or preset.benchmark != "medhorizon":
                continue
            path = report_path(_prediction_file(_entry(work_dir, model, dataset, since), work_dir, model, dataset))
            report = _json_object(path) if since.wrote(path) else None
            line = rules_line(report) if report else None
            if line:
                lines.append(f"{model} x {dataset}: {line}")
    return lines


def judge_vlmeval_run(work_dir: Path, models: list[str], datasets: dict[str, Preset | None], since: RunStart, *,
                      mode: str = "all", crashed: str | None = None, stamps: dict[str, dict] | None = None) -> Verdict:
    """Every reason the VLMEvalKit run that started at ``since`` does not count; ``stamps``: dataset -> the
    stamp this run wrote beside its predictions, which must still be there (else they are another run's)."""
    from .stamp import stamp_path

    v = Verdict("VLMEvalKit")
    for model in models:
        for dataset, want in (stamps or {}).items():
            path = stamp_path(work_dir / model, model, dataset)
            if _json_object(path) != want:
                v.reasons.append(f"{model} x {dataset}: the stamp beside its predictions ({path}) is not this "
                                 f"run's: another run wrote into {work_dir / model} meanwhile")
    log = _newest_log(work_dir, since)
    where = f"; log: {log}" if log else ""
    if crashed:
        v.reasons.append(f"VLMEvalKit stopped with {crashed}{where}")
    for model in models:
        for dataset, preset in datasets.items():
            entry = _entry(work_dir, model, dataset, since)
            report = work_dir / model / f"{model}_{dataset}_report.json"
            if entry is None and preset is not None and since.wrote(report):
                _our_problems(None, work_dir, model, dataset, since, v)  # a VLMEvalKit without status.json
            elif entry is None:
                err = last_error(log) if log else None
                v.reasons.append(f"{model} x {dataset} was not evaluated" + (f" ({err})" if err else "") + where)
            elif entry.get("error_message"):
                v.reasons.append(f"{model} x {dataset} failed: {entry['error_message']}{where}")
            elif entry.get("skip_reason") and not (mode == "infer" and entry["skip_reason"] == "mode_infer"):
                v.reasons.append(f"{model} x {dataset} was skipped by VLMEvalKit ({entry['skip_reason']}){where}")
            elif mode == "infer":
                continue
            elif preset is not None:
                _our_problems(entry, work_dir, model, dataset, since, v)
            elif not entry.get("metrics"):
                v.reasons.append(f"{model} x {dataset} produced no metrics{where}")
    return v


HELP = """usage: medhorizon-tasks vlmeval <VLMEvalKit run arguments>

Runs VLMEvalKit's own run.py (vlmeval.run, or a git checkout's root run.py) with this package's datasets and
probe models registered, then reads what it wrote and exits non-zero with one
line per reason when a dataset failed, was skipped, produced no metrics, had
items without a prediction, had video errors (unless
MEDHORIZON_ALLOW_VIDEO_ERRORS=1), or had items the model gave no answer to (a
failed API request, VLMEvalKit's "Failed to obtain answer", an empty or cut-off
reply: listed by uid). VLMEvalKit itself exits 0 in all of these cases.
Each MedHorizon dataset's accuracy is printed under both answer rules (the
package's and the MedHorizon authors'), with the items they read differently.

Datasets: MedHorizon_cap{64,128,256,512,1248}, MedHorizon_text, MedHorizon_oracle,
MedHorizon_frames{4,...,512}, MedHorizon_order_*, MedHorizon_sampling_*,
Sureon_visual, Sureon_blind, SurgHiBench, and each as <Benchmark>_Synthetic...
(e.g. MedHorizon_Synthetic_cap64) on the embedded synthetic data. Release data:
MEDHORIZON_DATA / SUREON_DATA / SURGHI_DATA and *_VIDEO_ROOT, as for lmms-eval.
Probe models: medhorizon_random, medhorizon_needle.

Forced: PRED_FORMAT=tsv (lossless predictions); --judge exact_matching unless
--judge is given (a --judge model judges Sureon's SM summaries only). --limit N
evaluates the first N items of each of this package's datasets.
Refused (exit 2) before loading anything: a dataset or model name that is
none of this package's or VLMEvalKit's (one line, the closest names), --limit 0,
an option a probe in --config does not take, a failing pre-flight of the release
data and videos, predictions in --work-dir that another package, data or video
version made (VLMEvalKit would silently reuse them), a model folder
(<work-dir>/<model>) held by another launcher still running, or a VLMEvalKit
that cannot be imported (the missing module and its install line, before any
folder is held). VLMEvalKit's run.py is called wherever the install keeps it
(ms-vlmeval's vlmeval/run.py, a git checkout's root run.py); two installed
distributions of vlmeval are named, with the one that runs
(`medhorizon-tasks doctor` says more).

exit status: 0 the run counts; 1 it failed or is incomplete; 2 refused.

examples:
  medhorizon-tasks vlmeval --model medhorizon_needle --data MedHorizon_Synthetic_cap64 --work-dir out/
  medhorizon-tasks vlmeval --model Qwen2.5-VL-7B-Instruct --data MedHorizon_cap64 MedHorizon_text --work-dir out/
  torchrun --nproc-per-node 2 -m medhorizon_tasks.adapters.vlmeval.launch --model ... --data ... --work-dir out/
"""


def main() -> int:
    return run_cli(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
