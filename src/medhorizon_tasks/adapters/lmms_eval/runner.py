"""Running the real lmms-eval CLI in a subprocess and finding what it wrote.

lmms-eval exits 0 even when an evaluation fails, so success is judged from the
files: a results JSON that holds every requested task's metric, and one
samples file per task (:func:`judge_run`). ``medhorizon-tasks run <lmms-eval
arguments>`` (:func:`run_cli`) is that check around a user's own command line.

A run owns its ``--output_path`` while it runs
(:func:`~medhorizon_tasks.runs.launch.own_outputs`): lmms-eval names its files
by the second, so a second run into the same folder is refused at once. The
files judged are the run's own (:func:`_collect`): a results file the run
wrote (:class:`~medhorizon_tasks.runs.launch.RunStart`: new or changed since
it started, whatever its date) whose recorded command line names this run's model,
model arguments, tasks and output path, and beside it samples files that hold
each of its items once (another lmms-eval started in the same second appends
to the same samples file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import DataError, MedHorizonError
from ...core.predictions import failed_responses
from ...core.safeio import read_json
from ...runs.launch import (
    EXIT_REFUSED,
    OutputsInUse,
    RunStart,
    Verdict,
    last_error,
    limit_problem,
    own_outputs,
    run_logged,
    tasks_problem,
)
from .ours import task_path

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}


@dataclass
class LmmsRun:
    model: str
    tasks: list[str]
    output_path: Path
    results: dict = field(default_factory=dict)        # the results JSON
    samples: dict[str, Path] = field(default_factory=dict)  # task -> samples JSONL
    log: Path | None = None
    seconds: float = 0.0
    not_own: list[str] = field(default_factory=list)  # why files written meanwhile are not (all) this run's

    def accuracy(self, task: str) -> float:
        return self.metric(task, "accuracy")

    def metric(self, task: str, name: str) -> float:
        return self.results["results"][task][f"{name},none"]


def lmms_eval_command(model: str, tasks: list[str], output_path: Path, *, model_args: str = "",
                      limit: int | None = None, num_processes: int = 1) -> list[str]:
    if num_processes > 1:
        launcher = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", str(num_processes),
                    "--multi_gpu", "--main_process_port", str(29500 + os.getpid() % 1000), "-m", "lmms_eval"]
    else:
        launcher = [sys.executable, "-m", "lmms_eval"]
    cmd = [*launcher, "--model", model, "--tasks", ",".join(tasks), "--include_path", str(task_path()),
           "--output_path", str(output_path), "--log_samples", "--batch_size", "1", "--seed", "0"]
    if model_args:
        cmd += ["--model_args", model_args]
    problem = limit_problem(limit)
    if problem:  # lmms-eval runs every item for --limit 0: never let "none" mean "all"
        raise MedHorizonError(problem)
    if limit is not None:
        cmd += ["--limit", str(limit)]
    return cmd


def run_lmms_eval(model: str, tasks: list[str], output_path: str | os.PathLike, *, model_args: str = "",
                  limit: int | None = None, num_processes: int = 1, env: dict | None = None,
                  echo: bool = False, timeout: float | None = None) -> LmmsRun:
    """Run lmms-eval and return its parsed outputs; raise MedHorizonError (with the log tail) if any is missing,
    or at once (:class:`~medhorizon_tasks.runs.launch.OutputsInUse`) when another run holds ``output_path``."""
    output_path = Path(output_path)
    log = output_path / f"lmms_eval_{model}.log"
    cmd = lmms_eval_command(model, tasks, output_path, model_args=model_args, limit=limit,
                            num_processes=num_processes)
    full_env = {**os.environ, **OFFLINE_ENV, **(env or {})}
    if num_processes > 1:
        full_env.setdefault("CUDA_VISIBLE_DEVICES", "")
        full_env.setdefault("ACCELERATE_USE_CPU", "1")
    with own_outputs(output_path, " ".join(cmd), option="output folder"):
        started = RunStart(output_path)
        rc = run_logged(cmd, env=full_env, log=log, echo=echo, timeout=timeout)
        run = LmmsRun(model, list(tasks), output_path, log=log, seconds=time.time() - started.time)
        _collect(run, started, {"model": model, "model_args": model_args, "tasks": ",".join(tasks),
                                "output_path": str(output_path)})
    missing = [t for t in tasks if t not in run.samples or not _has_metric(run.results.get("results", {}).get(t))]
    if rc != 0 or missing or run.not_own:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-40:])
        raise MedHorizonError(f"lmms-eval run of {model} on {', '.join(tasks)} failed (exit {rc}; "
                              f"no results for {missing or 'n/a'}{''.join('; ' + x for x in run.not_own)}); "
                              f"log: {log}\n{tail}")
    return run


def _has_metric(task_results) -> bool:
    """lmms-eval writes a task's metrics as ``"<metric>,<filter>"``; a failed aggregation leaves them null."""
    return isinstance(task_results, dict) and any(
        "," in k and not k.endswith("_stderr,none") and v is not None and v != "N/A"
        for k, v in task_results.items() if not k.startswith("alias"))


def _collect(run: LmmsRun, started: RunStart, expected: dict[str, str]) -> None:
    """This run's results JSON and the samples file of every task in it, among the files the run wrote
    (``started``): one whose command line (lmms-eval's ``config.resolved_cli_args``) agrees with ``expected``
    (``--model``, ``--model_args``, ``--tasks``, ``--output_path`` as given; an empty value is not compared).
    Anything that keeps the run from owning its files is said in ``run.not_own``."""
    mine, others = [], []
    for path in sorted(run.output_path.rglob("*_results.json")):
        if not started.wrote(path):
            continue
        try:
            results = read_json(path)
        except DataError:
            continue  # not a results file lmms-eval wrote: the run is judged as having written none
        if not isinstance(results, dict) or not isinstance(results.get("results", {}), dict):
            continue
        differs = _differs(results, expected)
        (others if differs else mine).append((path, results, differs))
    if len(mine) > 1:
        run.not_own.append(f"{len(mine)} results files written since this run started name this very run "
                           f"({', '.join(p.name for p, _, _ in mine)}): another run of the same command wrote "
                           f"into {run.output_path} meanwhile, so none of them can be trusted as this run's")
        return
    if not mine:
        if others:
            path, _, differs = others[0]
            run.not_own.append(f"the results written into {run.output_path} since this run started are another "
                               f"run's ({path.name}: {differs})")
        return
    results_file, run.results, _ = mine[0]
    stamp = results_file.name[: -len("_results.json")]
    counts = run.results.get("n-samples") if isinstance(run.results.get("n-samples"), dict) else {}
    for task in set(run.tasks) | set(run.results.get("results") or {}):
        p = results_file.with_name(f"{stamp}_samples_{task}.jsonl")
        if p.exists():
            run.samples[task] = p
            problem = _shared_samples(p, counts.get(task))
            if problem:
                run.not_own.append(problem)


def _differs(results: dict, expected: dict[str, str]) -> str:
    """How the command line recorded in a results file differs from this run's ('' when it does not)."""
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    cli = config.get("resolved_cli_args") if isinstance(config.get("resolved_cli_args"), dict) else config
    said = []
    for key, want in expected.items():
        if want and key in cli and not _same_arg(cli[key], want):  # what lmms-eval did not record is not compared
            said.append(f"{key} {cli[key]!r}, this run's {want!r}")
    return "; ".join(said)


def _same_arg(have, want: str) -> bool:
    """``have`` (as lmms-eval recorded it: secrets in model args become ``[REDACTED]``) is ``want``."""
    if not isinstance(have, str):
        return False
    pattern = re.escape(have).replace(re.escape("[REDACTED]"), "[^,]*")
    return re.fullmatch(pattern, want) is not None


def _shared_samples(path: Path, counts) -> str | None:
    """Why a samples file is not this run's alone (an item in it twice, or more lines than items), or None."""
    try:
        lines = [x for x in path.read_bytes().split(b"\n") if x.strip()]
    except OSError:
        return None
    expected = counts.get("effective") if isinstance(counts, dict) else None
    doc_ids = []
    for line in lines:
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and "doc_id" in rec:
            doc_ids.append(json.dumps(rec["doc_id"]))
    if len(set(doc_ids)) < len(doc_ids) or (isinstance(expected, int) and len(lines) > expected):
        return (f"{path.name} holds {len(lines)} samples for {expected if expected is not None else '?'} items, "
                f"some twice: another lmms-eval run wrote into it at the same second")
    return None


# ------------------------------------------------------------------ judging a finished run

def leaf_tasks(results: dict, requested: list[str]) -> list[str]:
    """The tasks that ran (groups expanded to their subtasks), in the results' own naming."""
    groups = results.get("group_subtasks")
    groups = groups if isinstance(groups, dict) else {}
    ran = list((results.get("results") or {}))
    out: list[str] = []
    for name in ran:
        if groups.get(name):
            continue  # a group: its subtasks are listed themselves
        out.append(name)
    return out or [t for t in requested if t not in groups]


def _item_records(samples: Path):
    """The per-item record of each sample line (the first metric value that carries a ``uid``)."""
    try:
        data = samples.read_bytes()
    except OSError:
        return
    # lines end at "\n" only: a model's text may hold U+2028 or U+0085, which str.splitlines would split on
    for line in data.split(b"\n"):
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if not isinstance(rec, dict):
            continue
        for value in rec.values():
            if isinstance(value, dict) and "uid" in value:
                yield value
                break


def video_errors_in(samples: Path) -> list[tuple[str, str]]:
    """``(uid, error)`` of every sample whose per-item record says its video failed."""
    return [(str(r["uid"]), str(r["error"])) for r in _item_records(samples) if r.get("error")]


def failed_responses_in(samples: Path) -> list[dict]:
    """``{"uid", "status", "reason"}`` of every sample whose response was a failure (``request_error``,
    ``truncated``), as the reports list them."""
    return failed_responses(r for r in _item_records(samples) if not r.get("error"))


def judge_run(run: LmmsRun, rc: int, *, log_samples: bool = True, ours_only: bool = False) -> Verdict:
    """Every reason the finished run ``run`` does not count (see :class:`~medhorizon_tasks.runs.launch.Verdict`)."""
    v = Verdict("lmms-eval")
    log = run.log if run.log is not None else Path(os.devnull)
    stop = _stop_message(log) if rc == EXIT_REFUSED else None
    if stop is not None:
        v.refused = True
        v.reasons.append(f"stopped before the model was loaded: {stop}")
        return v
    if not run.results:
        err = last_error(log)
        v.reasons.append("lmms-eval wrote no results: the evaluation failed" + (f" ({err})" if err else "")
                         + f"; log: {log}")
        v.reasons.extend(run.not_own)
        return v
    v.reasons.extend(run.not_own)
    if rc != 0:
        v.reasons.append(f"lmms-eval exited with status {rc}; log: {log}")
    results = run.results.get("results") or {}
    for task in leaf_tasks(run.results, run.tasks):
        if ours_only and not task.startswith(("medhorizon", "sureon", "surghi")):
            continue
        if not _has_metric(results.get(task)):
            err = last_error(log)
            v.reasons.append(f"task {task} produced no metric" + (f" ({err})" if err else ""))
        if log_samples and task not in run.samples:
            v.reasons.append(f"task {task} produced no samples file")
        errors = video_errors_in(run.samples[task]) if task in run.samples else []
        if errors:
            v.add_video_errors(f"task {task}", len(errors), errors[0][1])
        if task in run.samples:
            v.add_failed_responses(f"task {task}", failed_responses_in(run.samples[task]))
    return v


_STOP = "medhorizon-tasks: "  # how the start-up checks in the lmms-eval process begin the line that stops it


def _stop_message(log: Path) -> str | None:
    """What stopped lmms-eval before the model was loaded (exit 2): the start-up checks' own line (the
    pre-flight of data and videos, Sureon's missing detectors, a wrapper that mishandles frames), or None when
    the log has none (exit 2 for another reason: the evaluation failed)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    said = [line[len(_STOP):].strip() for line in lines if line.startswith(_STOP)]
    return said[-1] if said else None


def _launch_arguments(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--tasks", default="")
    p.add_argument("--model", default="")
    p.add_argument("--model_args", default="")
    p.add_argument("--output_path", default=None)
    p.add_argument("--log_samples", action="store_true")
    p.add_argument("--predict_only", action="store_true")
    p.add_argument("--include_path", default=None)
    p.add_argument("--limit", default=None)
    args, _ = p.parse_known_args(argv)
    return args


def refused_before_start(args: argparse.Namespace) -> str | None:
    """Why the run described by ``args`` (``--model``, ``--model_args``, ``--tasks``, ``--include_path``,
    ``--limit``) is refused before lmms-eval is started (:func:`~.request_check.request_problem`: a name lmms-eval
    would not find, a model arg this package's model does not take), or None."""
    from .request_check import request_problem

    return (limit_problem(args.limit, all_value="-1") or tasks_problem(args.tasks)
            or request_problem(args.model, args.model_args, args.tasks,
                               [args.include_path] if args.include_path else []))


def run_cli(argv: list[str], *, echo: bool = True) -> int:
    """``medhorizon-tasks run <lmms-eval arguments>``: the real lmms-eval CLI, then an honest exit status."""
    if not argv or argv[0] in ("-h", "--help"):
        print(RUN_HELP)
        return 0 if argv else EXIT_REFUSED
    args = _launch_arguments(argv)
    if not args.tasks:
        print("medhorizon-tasks run: error: --tasks is required (e.g. --tasks medhorizon)", file=sys.stderr)
        return EXIT_REFUSED
    if not args.output_path:
        print("medhorizon-tasks run: error: --output_path is required: the run is judged from the results and "
              "samples files lmms-eval writes there", file=sys.stderr)
        return EXIT_REFUSED
    refused = refused_before_start(args)
    if refused:
        print(f"medhorizon-tasks run: error: {refused}", file=sys.stderr)
        return EXIT_REFUSED
    argv = list(argv)
    if not args.log_samples:
        argv.append("--log_samples")  # the per-item samples are what video errors are read from
    output = Path(args.output_path)
    command = [sys.executable, "-m", "lmms_eval", *argv]
    try:
        with own_outputs(output, "medhorizon-tasks run " + " ".join(argv), option="--output_path"):
            log = output / f"medhorizon_run_{time.strftime('%Y%m%d_%H%M%S')}_{os.getpid()}.log"
            started = RunStart(output)
            rc = run_logged(command, env=dict(os.environ), log=log, echo=echo)
            run = LmmsRun(args.model, [t.strip() for t in args.tasks.split(",") if t.strip()], output, log=log,
                          seconds=time.time() - started.time)
            _collect(run, started, {"model": args.model, "model_args": args.model_args, "tasks": args.tasks,
                                    "output_path": args.output_path})
    except OutputsInUse as exc:
        print(f"medhorizon-tasks run: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    verdict = judge_run(run, rc)
    print(verdict.summary(), file=sys.stderr)
    if verdict.ok and run.results:
        print(f"results: {output}  (log {log})", file=sys.stderr)
    return verdict.exit_code


RUN_HELP = """usage: medhorizon-tasks run <lmms-eval arguments>

Runs the real lmms-eval CLI (python -m lmms_eval) with your arguments, then reads
what it wrote and exits non-zero with one line saying why when the evaluation
failed, a task produced no metric or no samples, items had video errors
(unless MEDHORIZON_ALLOW_VIDEO_ERRORS=1), items got no answer from the model
(a request that failed after its retries, an empty or cut-off reply: listed by
uid), or the files written are not this run's alone. lmms-eval itself exits 0
in all of these cases. --output_path is required (the run holds it until it
ends: a second run into the same folder is refused); --log_samples is added if
missing.

exit status: 0 the run counts; 1 it failed or is incomplete; 2 refused before it
started (arguments: a task or model name lmms-eval would not find, a model arg
this package's model does not take or a value it cannot be, --limit 0;
pre-flight: data, video root or videos unusable; the --output_path in use by
another run). Names and model args are checked before lmms-eval is started.

examples (the first on the embedded synthetic data with the needle probe; the second
needs a GPU, and is the paper's setting as `medhorizon-tasks protocol Qwen3-VL-8B` prints it):
  medhorizon-tasks run --model medhorizon_needle --tasks medhorizon_synthetic --output_path runs/needle
  medhorizon-tasks run --model medhorizon_qwen3_vl --model_args pretrained=Qwen/Qwen3-VL-8B-Instruct \\
      --tasks medhorizon_cap768 --batch_size 1 --log_samples --output_path results/
"""
