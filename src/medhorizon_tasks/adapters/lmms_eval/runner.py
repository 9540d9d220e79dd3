"""Running the real lmms-eval CLI in a subprocess and finding what it wrote.

lmms-eval exits 0 even when an evaluation fails, so success is judged from the
files: a results JSON that holds every requested task's metric, and one
samples file per task (:func:`judge_run`). ``medhorizon-tasks run <lmms-eval
arguments>`` (:func:`run_cli`) is that check around a user's own command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import MedHorizonError
from ...core.predictions import failed_responses
from ...runs.launch import EXIT_REFUSED, Verdict, last_error, run_logged

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

    def accuracy(self, task: str) -> float:
        return self.metric(task, "accuracy")

    def metric(self, task: str, name: str) -> float:
        return self.results["results"][task][f"{name},none"]


def task_path() -> Path:
    from importlib.resources import files

    return Path(str(files("medhorizon_tasks.task_yaml")))


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
    if limit:
        cmd += ["--limit", str(limit)]
    return cmd


def run_lmms_eval(model: str, tasks: list[str], output_path: str | os.PathLike, *, model_args: str = "",
                  limit: int | None = None, num_processes: int = 1, env: dict | None = None,
                  echo: bool = False, timeout: float | None = None) -> LmmsRun:
    """Run lmms-eval and return its parsed outputs; raise MedHorizonError (with the log tail) if any is missing."""
    output_path = Path(output_path)
    output_path.mkdir(parents=True, exist_ok=True)
    log = output_path / f"lmms_eval_{model}.log"
    cmd = lmms_eval_command(model, tasks, output_path, model_args=model_args, limit=limit,
                            num_processes=num_processes)
    full_env = {**os.environ, **OFFLINE_ENV, **(env or {})}
    if num_processes > 1:
        full_env.setdefault("CUDA_VISIBLE_DEVICES", "")
        full_env.setdefault("ACCELERATE_USE_CPU", "1")
    started = time.time()
    rc = run_logged(cmd, env=full_env, log=log, echo=echo, timeout=timeout)
    run = LmmsRun(model, list(tasks), output_path, log=log, seconds=time.time() - started)
    _collect(run, started)
    missing = [t for t in tasks if t not in run.samples or not _has_metric(run.results.get("results", {}).get(t))]
    if rc != 0 or missing:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-40:])
        raise MedHorizonError(f"lmms-eval run of {model} on {', '.join(tasks)} failed (exit {rc}; "
                              f"no results for {missing or 'n/a'}); log: {log}\n{tail}")
    return run


def _has_metric(task_results) -> bool:
    """lmms-eval writes a task's metrics as ``"<metric>,<filter>"``; a failed aggregation leaves them null."""
    return isinstance(task_results, dict) and any(
        "," in k and not k.endswith("_stderr,none") and v is not None and v != "N/A"
        for k, v in task_results.items() if not k.startswith("alias"))


def _collect(run: LmmsRun, started: float) -> None:
    """The newest results JSON written since ``started`` and the samples files of every task in it."""
    fresh = [p for p in run.output_path.rglob("*_results.json") if p.stat().st_mtime >= started - 1]
    if not fresh:
        return
    results_file = max(fresh, key=lambda p: p.stat().st_mtime)
    try:
        results = json.loads(results_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return
    if not isinstance(results, dict) or not isinstance(results.get("results", {}), dict):
        return  # not a results file lmms-eval wrote: the run is judged as having written none
    run.results = results
    stamp = results_file.name[: -len("_results.json")]
    names = set(run.tasks) | set((run.results.get("results") or {}))
    for task in names:
        p = results_file.with_name(f"{stamp}_samples_{task}.jsonl")
        if p.exists():
            run.samples[task] = p


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
    if rc == EXIT_REFUSED and "pre-flight" in (log.read_text(errors="replace") if log.exists() else ""):
        v.refused = True
        v.reasons.append("stopped by the pre-flight before the model was loaded (message above)")
        return v
    if not run.results:
        err = last_error(log)
        v.reasons.append("lmms-eval wrote no results: the evaluation failed" + (f" ({err})" if err else "")
                         + f"; log: {log}")
        return v
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


def _launch_arguments(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--tasks", default="")
    p.add_argument("--model", default="")
    p.add_argument("--output_path", default=None)
    p.add_argument("--log_samples", action="store_true")
    p.add_argument("--predict_only", action="store_true")
    args, _ = p.parse_known_args(argv)
    return args


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
    argv = list(argv)
    if not args.log_samples:
        argv.append("--log_samples")  # the per-item samples are what video errors are read from
    output = Path(args.output_path)
    output.mkdir(parents=True, exist_ok=True)
    log = output / f"medhorizon_run_{time.strftime('%Y%m%d_%H%M%S')}.log"
    started = time.time()
    rc = run_logged([sys.executable, "-m", "lmms_eval", *argv], env=dict(os.environ), log=log, echo=echo)
    run = LmmsRun(args.model, [t.strip() for t in args.tasks.split(",") if t.strip()], output, log=log,
                  seconds=time.time() - started)
    _collect(run, started)
    verdict = judge_run(run, rc)
    print(verdict.summary(), file=sys.stderr)
    if verdict.ok and run.results:
        print(f"results: {output}  (log {log})", file=sys.stderr)
    return verdict.exit_code


RUN_HELP = """usage: medhorizon-tasks run <lmms-eval arguments>

Runs the real lmms-eval CLI (python -m lmms_eval) with your arguments, then reads
what it wrote and exits non-zero with one line saying why when the evaluation
failed, a task produced no metric or no samples, items had video errors
(unless MEDHORIZON_ALLOW_VIDEO_ERRORS=1), or items got no answer from the model
(a request that failed after its retries, an empty or cut-off reply: listed by
uid). lmms-eval itself exits 0 in all of these cases. --output_path is required; --log_samples is added if missing.

exit status: 0 the run counts; 1 it failed or is incomplete; 2 refused before it
started (arguments, pre-flight: data, video root or videos unusable).

example:
  medhorizon-tasks run --model qwen2_5_vl --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct \\
      --tasks medhorizon --output_path results/
"""
