"""Where a command's data comes from, said the same way by every command: ``--data PATH``, ``--data OWNER/NAME``
(a dataset on the Hugging Face Hub, the release's being ``DBD123/MLV-Bench``), or ``--synthetic`` (the embedded
synthetic benchmark, built on first use), which ``score`` / ``compare`` / ``blind-audit`` / ``leaderboard make``
also infer when no data is given from an lmms-eval samples file of a ``*_synthetic*`` task or a VLMEvalKit result
file of a ``*_Synthetic_*`` dataset (``<model>_MedHorizon_Synthetic_cap64.tsv``, its ``_records.jsonl``). Those
commands take ``--benchmark`` from the file's task or dataset too (``sureon_synthetic_visual`` is Sureon's) when
it is not given (:func:`add_benchmark_argument`).

:func:`resolve` runs once the arguments are parsed, before the command: it turns a Hub id into its local
snapshot folder and ``--synthetic`` into the synthetic data's path (and video root), so that the commands
themselves only ever see paths.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

__all__ = ["add_synthetic_argument", "add_benchmark_argument", "resolve", "synthetic_paths", "samples_task",
           "samples_benchmark", "RELEASE_ID"]

# The authors' release on the Hugging Face Hub (shared/reference/medhorizon_release.md): one split `test`,
# read from mlvbench_test.jsonl, which load_release finds in the snapshot folder.
RELEASE_ID = "DBD123/MLV-Bench"

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_FILE_SUFFIXES = {".jsonl", ".json", ".csv", ".parquet", ".txt", ".yaml", ".yml", ".arrow"}


def add_synthetic_argument(parser: argparse.ArgumentParser, group=None, *, every: bool = False) -> None:
    """``--synthetic``: the embedded synthetic data of the command's ``--benchmark`` instead of ``--data``;
    ``every``: of every benchmark (a command without ``--benchmark``, which takes ``--data BENCHMARK=PATH``)."""
    (group or parser).add_argument(
        "--synthetic", action="store_true",
        help=("the embedded synthetic benchmarks of MedHorizon, Sureon and SurgHiBench (built on first use, as "
              "`medhorizon-tasks synthetic` does) instead of --data" if every else
              "the embedded synthetic benchmark of --benchmark (built on first use, as `medhorizon-tasks "
              "synthetic` does) instead of --data"))
    parser.set_defaults(_synthetic_data=True)


def add_benchmark_argument(parser: argparse.ArgumentParser, choices: list[str], default: str | None) -> None:
    """``--benchmark``: when not given, the benchmark of the predictions when they are lmms-eval samples of one of
    its tasks, else ``default`` (None: then it must be given)."""
    samples = "the benchmark; when not given, the one whose task wrote the lmms-eval samples given"
    parser.add_argument("--benchmark", choices=choices, default=None,
                        help=f"{samples}, else {default} (default: {default})" if default else
                        f"{samples} (required for other predictions files)")
    parser.set_defaults(_benchmark_default=default or "")


def hub_id(value: str) -> str | None:
    """``value`` when it names a Hub dataset (``owner/name``, nothing on disk by that name, no file suffix)."""
    if not isinstance(value, str) or not _HUB_ID.fullmatch(value) or Path(value).expanduser().exists():
        return None
    return None if Path(value).suffix.lower() in _FILE_SUFFIXES else value


def fetch_hub_dataset(repo_id: str) -> Path:
    """The local snapshot folder of the Hub dataset ``repo_id`` (``huggingface_hub.snapshot_download`` into the
    hub cache: downloaded once, then read from the cache; ``HF_HUB_OFFLINE=1`` reads the cache only)."""
    from huggingface_hub import snapshot_download

    from ..core.errors import DataError

    try:
        return Path(snapshot_download(repo_id=repo_id, repo_type="dataset"))
    except Exception as exc:  # offline without a cached copy, no such dataset, a gated one: one message
        raise DataError(f"--data {repo_id}: not a file or folder here, and the Hugging Face Hub dataset of that "
                        f"name could not be fetched ({type(exc).__name__}: {exc})") from None


def synthetic_paths(benchmark: str) -> tuple[Path, Path]:
    """``(data, video root)`` of the embedded synthetic benchmark of ``benchmark``, built on first use."""
    if benchmark == "sureon":
        from ..data.synthetic.sureon import build_sureon_sample

        s = build_sureon_sample()
        return s.data_path, s.video_root
    if benchmark == "surghi":
        from ..data.synthetic.surghi import build_surghi_sample

        g = build_surghi_sample()
        return g.annotations_path, g.video_root
    from ..data.synthetic.medhorizon import build_synthetic

    b = build_synthetic(progress=False)
    return b.data_path, b.video_root


def samples_task(path: str) -> str | None:
    """The task of an lmms-eval ``<stamp>_samples_<task>.jsonl`` file, from its name."""
    m = re.fullmatch(r".+_samples_(.+)\.jsonl", Path(str(path)).name)
    return m.group(1) if m else None


def samples_benchmark(path: str) -> str | None:
    """The benchmark of an lmms-eval samples file of one of the package's tasks (``medhorizon_cap64``,
    ``sureon_synthetic_blind``, ``surghi_synthetic``...), from its name; None for any other file."""
    task = samples_task(path)
    name = task.split("_", 1)[0] if task else None
    return name if name in ("medhorizon", "sureon", "surghi") else None


def vlmeval_preset(path: str):
    """The :class:`~medhorizon_tasks.adapters.vlmeval.presets.Preset` of a VLMEvalKit result file of one of the
    package's datasets (``<model>_<dataset>.tsv`` / ``.xlsx``, ``<model>_<dataset>_records.jsonl``), from its name;
    None for any other file."""
    from ..adapters.vlmeval.presets import PRESETS

    name = Path(str(path)).name
    m = re.fullmatch(r"(.+?)(?:_records\.jsonl|\.tsv|\.xlsx|\.csv)", name)
    if not m:
        return None
    stem = m.group(1)
    found = [p for n, p in PRESETS.items() if stem.endswith("_" + n)]
    return max(found, key=lambda p: len(p.name)) if found else None


def file_source(path: str) -> tuple[str, bool] | None:
    """``(benchmark, synthetic)`` of a prediction file of one of the package's tasks or datasets, from its name:
    lmms-eval's samples and VLMEvalKit's result files alike; None for any other file."""
    task = samples_task(path)
    bench = samples_benchmark(path)
    if bench is not None:
        return bench, "_synthetic" in task
    preset = vlmeval_preset(path)
    return (preset.benchmark, preset.synthetic) if preset is not None else None


def _prediction_files(args) -> list[str]:
    return [f for f in (getattr(args, "predictions", None), *(getattr(args, "runs", None) or [])) if f]


def _inferred_synthetic(args) -> bool:
    """No data given, and the predictions are of a synthetic task (lmms-eval) or dataset (VLMEvalKit): the
    synthetic data is theirs."""
    sources = [file_source(f) for f in _prediction_files(args)]
    return bool(sources) and all(s is not None and s[1] for s in sources)


def _resolve_benchmark(args) -> None:
    """``--benchmark`` not given: the samples' benchmark when they all name the same one, else the command's
    default, else an error."""
    from ..core.errors import MedHorizonError

    files = _prediction_files(args)
    found = {(file_source(f) or (None,))[0] for f in files}
    if len(found) == 1 and None not in found:
        args.benchmark = found.pop()
    elif args._benchmark_default:
        args.benchmark = args._benchmark_default
    else:
        raise MedHorizonError("--benchmark is required: the predictions are not lmms-eval samples or VLMEvalKit "
                              "results of one benchmark, whose file name would say it (..._samples_<task>.jsonl, "
                              "<model>_<dataset>.tsv)")


def _local(value: str) -> str:
    """A ``[BENCHMARK=]PATH`` value with a Hub id replaced by its snapshot folder."""
    key, sep, rest = value.partition("=")
    if sep and hub_id(rest):
        return f"{key}={fetch_hub_dataset(rest)}"
    return str(fetch_hub_dataset(value)) if hub_id(value) else value


def resolve(args: argparse.Namespace) -> None:
    """Hub ids and ``--synthetic`` (given or inferred) turned into paths in ``args``, in place."""
    from ..core.errors import MedHorizonError

    if getattr(args, "_benchmark_default", None) is not None and args.benchmark is None:
        _resolve_benchmark(args)
    data = getattr(args, "data", None)
    if isinstance(data, str):
        args.data = _local(data)
    elif isinstance(data, list):
        args.data = [_local(v) for v in data]
    if not getattr(args, "_synthetic_data", False):
        return
    if not args.synthetic:
        if data or getattr(args, "annotations", None) or not _inferred_synthetic(args):
            return
        args.synthetic = True
        print("(the predictions are of a synthetic task: scored against the embedded synthetic data; "
              "pass --data to score them against other data)", file=sys.stderr)
    elif data or getattr(args, "annotations", None):
        raise MedHorizonError("--synthetic and --data name two sources of data: give one")
    if isinstance(data, list) or (data is None and isinstance(getattr(args, "data", None), list)) \
            or getattr(args, "benchmark", None) is None:
        # every benchmark's (a leaderboard of submissions for several benchmarks)
        from ..benchmarks.data import BENCHMARKS

        args.data = [f"{b}={synthetic_paths(b)[0]}" for b in BENCHMARKS]
        return
    path, video_root = synthetic_paths(args.benchmark)
    args.data = str(path)
    for name in ("video_root", "root"):
        if hasattr(args, name) and getattr(args, name) is None:
            setattr(args, name, str(video_root))
