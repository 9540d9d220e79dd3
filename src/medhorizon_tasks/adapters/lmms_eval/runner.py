"""Running the real lmms-eval CLI in a subprocess and finding what it wrote.

lmms-eval exits 0 even when an evaluation fails, so success is judged from the
files: a results JSON that holds every requested task's metric, and one
samples file per task.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MedHorizonError

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
    with open(log, "w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            if echo:
                sys.stderr.write(line)
        rc = proc.wait(timeout=timeout)
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
        "," in k and not k.endswith("_stderr,none") and v is not None for k, v in task_results.items())


def _collect(run: LmmsRun, started: float) -> None:
    """The newest results JSON written since ``started`` and its samples files."""
    fresh = [p for p in run.output_path.rglob("*_results.json") if p.stat().st_mtime >= started - 1]
    if not fresh:
        return
    results_file = max(fresh, key=lambda p: p.stat().st_mtime)
    run.results = json.loads(results_file.read_text(encoding="utf-8"))
    stamp = results_file.name[: -len("_results.json")]
    for task in run.tasks:
        p = results_file.with_name(f"{stamp}_samples_{task}.jsonl")
        if p.exists():
            run.samples[task] = p
