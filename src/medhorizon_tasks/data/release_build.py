"""Building the Hugging Face dataset of a release, and publishing it: ``medhorizon-tasks build-dataset``.

A build validates the annotations with the package's own readers (every
problem named, nothing written on any), then writes the Hub layout::

    README.md                                   the dataset card: hf_dataset_card/README.md with its YAML
                                                configs / dataset_info rendered for the configs built
    version.json                                the data version of each benchmark (as `leaderboard version`)
    mlvbench_test.jsonl                         MedHorizon as published: one record per video, qa nested
    data/medhorizon/test-00000-of-00001.parquet one row per question (release.features())
    sureon/sureon_test.jsonl                    Sureon items, as `load_items` reads them
    data/sureon/test-00000-of-00001.parquet     one row per item (sureon_items.features())
    surghi/surghi_test.jsonl, hierarchies.json  SurgHiBench frame rows and the hierarchies they are scored on
    data/surghi/test-00000-of-00001.parquet     one row per frame (frames.item_features())

so that ``datasets.load_dataset(DIR)`` (config ``medhorizon``, the default,
or ``sureon`` / ``surghi``) gives the items with typed Features, and every
command of the package takes the JSONL files as ``--data``: ``load_release(DIR)``
reads ``mlvbench_test.jsonl``, and ``leaderboard version`` prints the hash in
``version.json``. The same input gives the same bytes (no time stamps), so a
rebuild that changes nothing uploads nothing new.

Publishing (``push``) uploads the folder with ``huggingface_hub``'s
``upload_folder`` in one commit whose message carries the versions. Without a
token, and with ``--dry-run``, nothing leaves the machine: the plan --
every path, size and SHA-256 -- is printed instead.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..benchmarks.sureon import items as sureon_items
from ..benchmarks.surghi.frames import HIERARCHY_FILE as SURGHI_HIERARCHY_FILE
from ..core.errors import DataError, MedHorizonError, VideoError
from ..core.paths import relative_video_path
from ..core.safeio import ByPath, atomic_write_bytes, atomic_write_files, iter_jsonl, read_json, read_text, sha256_file

__all__ = ["BENCHMARK_FILES", "CONFIG_PATHS", "card_template",
           "render_card", "split_card", "build_dataset", "BuildResult", "upload_plan", "push", "format_plan",
           "VERSION_FILE"]

VERSION_FILE = "version.json"
#: The JSONL each benchmark's readers take, inside the built folder.
BENCHMARK_FILES = {"medhorizon": "mlvbench_test.jsonl", "sureon": "sureon/sureon_test.jsonl",
                   "surghi": "surghi/surghi_test.jsonl"}
HIERARCHY_FILE = f"surghi/{SURGHI_HIERARCHY_FILE}"  # beside the rows: the name every reader looks for
#: The parquet of each config (one split, ``test``).
CONFIG_PATHS = {b: f"data/{b}/test-00000-of-00001.parquet" for b in BENCHMARK_FILES}
_OLD_HIERARCHY_FILE = "surghi/hierarchy.json"  # an earlier build's name: removed by a rebuild
_OWN = ("README.md", VERSION_FILE, *BENCHMARK_FILES.values(), HIERARCHY_FILE, _OLD_HIERARCHY_FILE,
        *CONFIG_PATHS.values())
_BUILD_INFO = "<!-- build-info -->"


# ------------------------------------------------------------------ Sureon's Features

@functools.cache
def _features(benchmark: str):
    if benchmark == "medhorizon":
        from ..benchmarks.medhorizon.release import features

        return features()
    if benchmark == "sureon":
        return sureon_items.features()
    from ..benchmarks.surghi.frames import item_features

    return item_features()


# ------------------------------------------------------------------ the card

def card_template(path: str | os.PathLike | None = None) -> Path:
    """The card to build from: ``path``, else the package's copy, else the checkout's ``hf_dataset_card/``."""
    if path is not None:
        return Path(path)
    try:
        from importlib.resources import files

        packaged = files("medhorizon_tasks.hf_dataset_card") / "README.md"
        if packaged.is_file():
            return Path(str(packaged))
    except (ModuleNotFoundError, TypeError):
        pass
    checkout = Path(__file__).resolve().parents[3] / "hf_dataset_card" / "README.md"
    if checkout.is_file():
        return checkout
    raise MedHorizonError("the dataset card template (hf_dataset_card/README.md) is not installed: pass --card")


def split_card(text: str, source: str = "card") -> tuple[dict, str]:
    """``(YAML header as a dict, Markdown body)`` of a dataset card."""
    import yaml

    m = re.match(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", text, re.DOTALL)
    if not m:
        raise DataError("the card does not start with a YAML header between '---' lines", source=source)
    try:
        header = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        raise DataError(f"the card's YAML header is not valid YAML ({exc})", source=source) from None
    if not isinstance(header, dict):
        raise DataError("the card's YAML header is not a mapping", source=source)
    return header, m.group(2)


def render_card(template: str, built: dict[str, int], versions: dict[str, str], num_bytes: dict[str, int]) -> str:
    """The template with its ``configs`` and ``dataset_info`` for the configs ``built`` ({config: rows}), and
    the build's versions where the body has ``<!-- build-info -->`` (else at its end)."""
    import yaml

    header, body = split_card(template)
    order = [b for b in BENCHMARK_FILES if b in built]
    header["configs"] = [{"config_name": b, **({"default": True} if b == order[0] else {}),
                          "data_files": [{"split": "test", "path": CONFIG_PATHS[b]}]} for b in order]
    header["dataset_info"] = [{"config_name": b, "features": _features(b)._to_yaml_list(),
                               "splits": [{"name": "test", "num_bytes": num_bytes[b], "num_examples": built[b]}],
                               "download_size": num_bytes[b], "dataset_size": num_bytes[b]} for b in order]
    info = ["## This build", "", "| config | rows | data version |", "| --- | --- | --- |"]
    info += [f"| `{b}` | {built[b]} | `{versions[b]}` |" for b in order]
    info += ["", "The data version is what `medhorizon-tasks leaderboard version` prints for the same data; "
             "leaderboard submissions name it."]
    block = "\n".join(info)
    body = body.replace(_BUILD_INFO, block) if _BUILD_INFO in body else body.rstrip("\n") + "\n\n" + block + "\n"
    text = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{text}---\n{body}"


# ------------------------------------------------------------------ reading the sources

def _safe_relative(path: str) -> bool:
    try:
        relative_video_path(path)
    except VideoError:
        return False
    return True


def _raw_records(path: Path) -> list | None:
    """The source's records as written (JSONL / JSON list); None for a folder, parquet or CSV / TSV."""
    if path.is_dir() or path.suffix.lower() in (".parquet", ".csv", ".tsv"):
        return None
    if path.suffix.lower() == ".json":
        value = read_json(path)
        return value if isinstance(value, list) else [value]
    return [rec for _, rec in iter_jsonl(path)]


@dataclass
class _Config:
    benchmark: str
    rows: list[dict]
    jsonl: list
    version: str
    source: Path
    hierarchies: dict | None = None


def _load(benchmark: str, src: Path, hierarchy: Path | None) -> _Config:
    from ..benchmarks.data import load_benchmark_data

    data = load_benchmark_data(benchmark, src, hierarchy=hierarchy if benchmark == "surghi" else None)
    problems: list[str] = []
    if benchmark == "medhorizon":
        rows = [it.to_record() for it in data.items]
        for it in data.items:
            if not _safe_relative(it.video_path):
                problems.append(f"item {it.uid}: field 'video_path': {it.video_path!r} must be relative to the video "
                                "root (no absolute path, no '..')")
        from ..benchmarks.medhorizon.release import release_records

        # the video records exactly as the reader read them (a built folder: its JSONL), never regrouped
        jsonl = [rec for _, rec in release_records(src)]
        return _finish(_Config(benchmark, rows, jsonl, data.version, src), problems)
    if benchmark == "sureon":
        rows = [sureon_items.to_row(it) for it in data.items]
        return _finish(_Config(benchmark, rows, _raw_records(src) or [sureon_items.from_row(r) for r in rows],
                               data.version, src), problems)
    from ..benchmarks.surghi.frames import read_frame_rows

    items = read_frame_rows(src, role="items")
    for r in items:
        h = data.hierarchies[r.dataset][0]
        if not h.is_phase(r.phase):
            problems.append(f"frame {r.uid}: phase {r.phase!r} is not a phase of the {r.dataset} hierarchy")
        if r.step is not None and not h.is_step(r.step):  # None: a dataset annotated with phases only
            problems.append(f"frame {r.uid}: step {r.step!r} is not a step of the {r.dataset} hierarchy")
        if not _safe_relative(r.video_path):
            problems.append(f"frame {r.uid}: video_path {r.video_path!r} must be relative to the video root")
    rows = [{"uid": r.uid, **{k: getattr(r, k) for k in ("dataset", "video", "frame", "phase", "step",
                                                          "timestamp_s", "video_path")}} for r in items]
    hierarchies = {ds: h.to_json() for ds, (h, _) in sorted(data.hierarchies.items())}
    return _finish(_Config(benchmark, rows, _raw_records(src) or [{k: v for k, v in r.items() if k != "uid"}
                                                                    for r in rows],
                           data.version, src, hierarchies), problems)


def _finish(cfg: _Config, problems: list[str]) -> _Config:
    if problems:
        raise DataError(problems, source=str(cfg.source))
    _reads_back_as_built(cfg)
    return cfg


def _reads_back_as_built(cfg: _Config) -> None:
    """The JSONL (and hierarchy) this build writes, read back by the package's own reader, has the data
    version of the source: the version written in ``version.json`` is the one ``leaderboard version``
    computes on the built folder."""
    import tempfile

    from ..benchmarks.data import load_benchmark_data

    with tempfile.TemporaryDirectory(prefix="medhorizon-build-") as tmp:
        jsonl = atomic_write_bytes(Path(tmp) / PurePosixPath(BENCHMARK_FILES[cfg.benchmark]).name,
                                   _jsonl_bytes(cfg.jsonl))
        hierarchy = (atomic_write_bytes(Path(tmp) / SURGHI_HIERARCHY_FILE, _json_bytes(cfg.hierarchies))
                     if cfg.hierarchies is not None else None)
        again = load_benchmark_data(cfg.benchmark, jsonl, hierarchy=hierarchy).version
    if again != cfg.version:
        raise DataError(f"the {BENCHMARK_FILES[cfg.benchmark]} built from it reads back as data version {again}, not "
                        f"its own {cfg.version}: nothing was written", source=str(cfg.source))


# ------------------------------------------------------------------ building

@dataclass
class BuildResult:
    out: Path
    versions: dict[str, str]
    rows: dict[str, int]
    files: list[Path] = field(default_factory=list)



def _links_in(folder: Path) -> list[str]:
    """Every symlink under ``folder`` (not followed), outside ``.cache``: "rel -> target"."""
    found = []
    for top, dirs, files in os.walk(folder):
        rel_top = Path(top).relative_to(folder)
        if rel_top.parts[:1] == (".cache",):
            dirs[:] = []
            continue
        for name in sorted(dirs + files):
            p = Path(top) / name
            if p.is_symlink():
                found.append(f"{(rel_top / name).as_posix()} -> {os.readlink(p)}")
    return found


def _check_out(out: Path) -> None:
    """``out`` may be new, empty, or an earlier build: anything else would be uploaded with it. A symlink in
    it (``data/`` pointing elsewhere) would make the build write outside ``out``: refused."""
    if not out.exists():
        return
    if not out.is_dir():
        raise MedHorizonError(f"--out {out} is a file, not a folder")
    links = _links_in(out)
    if links:
        raise MedHorizonError(f"--out {out} holds symlinks, through which the build would write outside it: "
                              f"{', '.join(links[:10])}{' ...' if len(links) > 10 else ''}; remove them or use an "
                              "empty folder")
    own = {PurePosixPath(p) for p in _OWN}
    stray = []
    for p in sorted(out.rglob("*")):
        rel = PurePosixPath(p.relative_to(out).as_posix())
        if p.is_dir() or rel in own or rel.parts[0] == ".cache":
            continue
        stray.append(str(rel))
    if stray:
        raise MedHorizonError(f"--out {out} holds files that are not part of a build (they would be uploaded with it): "
                              f"{', '.join(stray[:10])}{' ...' if len(stray) > 10 else ''}; use an empty folder")


def build_dataset(sources: dict[str, str | os.PathLike], out: str | os.PathLike, *,
                  hierarchy: str | os.PathLike | None = None,
                  card: str | os.PathLike | None = None) -> BuildResult:
    """Validate ``sources`` (``{benchmark: file}``) and write the Hub layout (module doc) into ``out``.

    Every file is written atomically and all together: a failure leaves ``out`` as it was.
    """
    from datasets import Dataset

    from ..benchmarks.data import BENCHMARKS, HASH_SCHEME

    unknown = sorted(set(sources) - set(BENCHMARKS))
    if unknown or not sources:
        raise MedHorizonError(f"--data: unknown benchmark(s) {', '.join(unknown)} (expected {', '.join(BENCHMARKS)})"
                              if unknown else "nothing to build: give --data")
    if hierarchy is not None and "surghi" not in sources:
        raise MedHorizonError("--hierarchy applies to the surghi source only")
    out = Path(out).expanduser()
    _check_out(out)
    template_path = card_template(card)
    template = read_text(template_path)
    split_card(template, str(template_path))
    configs = {b: _load(b, Path(sources[b]).expanduser(), Path(hierarchy) if hierarchy else None)
               for b in BENCHMARKS if b in sources}

    files: dict[Path, object] = {}
    num_bytes: dict[str, int] = {}
    for b, cfg in configs.items():
        ds = Dataset.from_list(cfg.rows, features=_features(b))
        num_bytes[b] = int(ds.data.nbytes)
        files[out / CONFIG_PATHS[b]] = ByPath(lambda p, ds=ds: _quietly(lambda: ds.to_parquet(str(p))))
        files[out / BENCHMARK_FILES[b]] = _jsonl_bytes(cfg.jsonl)
        if cfg.hierarchies is not None:
            files[out / HIERARCHY_FILE] = _json_bytes(cfg.hierarchies)
    versions = {b: cfg.version for b, cfg in configs.items()}
    rows = {b: len(cfg.rows) for b, cfg in configs.items()}
    files[out / VERSION_FILE] = _json_bytes({
        "scheme": HASH_SCHEME, "versions": versions, "rows": rows,
        "files": {b: BENCHMARK_FILES[b] for b in configs},
        "hierarchy": HIERARCHY_FILE if "surghi" in configs else None,
        "sources": {b: {"name": cfg.source.name, "sha256": sha256_file(cfg.source) if cfg.source.is_file() else None}
                    for b, cfg in configs.items()},
    })
    files[out / "README.md"] = render_card(template, rows, versions, num_bytes)
    _check_out(out)  # again, just before writing: validation may have taken a while
    written = atomic_write_files(files)
    # Files of an earlier build that this one does not make (a config left out) must not be uploaded again.
    for rel in _OWN:
        stale = out / rel
        if stale not in files and stale.is_file():
            stale.unlink()
    return BuildResult(out, versions, rows, sorted(written))


def _quietly(fn):
    """``fn()`` without ``datasets``' progress bar (a build prints its own one-line summary)."""
    from datasets.utils import logging as dlog

    was = dlog.is_progress_bar_enabled()
    dlog.disable_progress_bar()
    try:
        return fn()
    finally:
        if was:
            dlog.enable_progress_bar()


def _json_bytes(value) -> bytes:
    import json

    return (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _jsonl_bytes(records: list) -> bytes:
    import json

    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode("utf-8")


# ------------------------------------------------------------------ publishing

def upload_plan(out: str | os.PathLike) -> list[dict]:
    """Every file ``upload_folder`` would send: ``{"path", "size", "sha256"}``, sorted by path.

    Refused (MedHorizonError) unless the plan holds every file the card and ``version.json`` refer to (the
    configs' ``data_files``, each benchmark's JSONL, the hierarchy): a dataset whose card names a missing
    file does not load. A symlink in the folder is refused too: what it points at is not part of the build.
    """
    out = Path(out)
    if not (out / VERSION_FILE).is_file():
        raise MedHorizonError(f"{out} is not a built dataset (no {VERSION_FILE}): run build-dataset first")
    links = _links_in(out)
    if links:
        raise MedHorizonError(f"{out} holds symlinks, which are not part of a build: {', '.join(links[:10])}"
                              f"{' ...' if len(links) > 10 else ''}; build the folder again without them")
    plan = []
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if p.is_file() and not rel.startswith(".cache/") and not rel.startswith("."):
            plan.append({"path": rel, "size": p.stat().st_size, "sha256": sha256_file(p)})
    paths = [f["path"] for f in plan]
    missing = [f"{ref} ({why})" for ref, why in _referenced(out) if not any(fnmatch.fnmatchcase(p, ref) for p in paths)]
    if missing:
        raise MedHorizonError(f"{out}: the card or {VERSION_FILE} refers to files the folder does not hold, so the "
                              f"upload would be a dataset that does not load: {', '.join(missing)}; build it again")
    return plan


def _referenced(out: Path) -> list[tuple[str, str]]:
    """``(path or glob, who refers to it)`` for every file the built card and ``version.json`` name."""
    refs = [("README.md", "the dataset card")]
    card = out / "README.md"
    header = split_card(read_text(card), str(card))[0] if card.is_file() else {}
    for cfg in header.get("configs") or []:
        files = cfg.get("data_files") if isinstance(cfg, dict) else None
        for entry in files if isinstance(files, list) else [files]:
            path = entry.get("path") if isinstance(entry, dict) else entry
            for one in path if isinstance(path, list) else [path]:
                if isinstance(one, str):
                    refs.append((one, f"config {cfg.get('config_name')!r} of the card"))
    written = read_json(out / VERSION_FILE)
    if isinstance(written, dict):
        for b, rel in (written.get("files") or {}).items():
            refs.append((str(rel), f"{b} in {VERSION_FILE}"))
        if written.get("hierarchy"):
            refs.append((str(written["hierarchy"]), f"hierarchy in {VERSION_FILE}"))
    return refs


def _commit_message(out: Path) -> str:
    written = read_json(out / VERSION_FILE)
    versions = written.get("versions") if isinstance(written, dict) else None
    if not isinstance(versions, dict):
        raise DataError("field 'versions': not the object build-dataset writes; build the folder again",
                        source=str(out / VERSION_FILE))
    return "MedHorizon data " + ", ".join(f"{b} {v}" for b, v in sorted(versions.items()))


def format_plan(repo: str, plan: list[dict], message: str, reason: str) -> str:
    total = sum(f["size"] for f in plan)
    width = max((len(f["path"]) for f in plan), default=0)
    lines = [f"dry run ({reason}): would upload {len(plan)} files, {total:,} bytes, to the dataset repository "
             f"{repo} (https://huggingface.co/datasets/{repo}) in one commit: {message!r}"]
    lines += [f"  {f['path']:<{width}}  {f['size']:>12,} B  sha256:{f['sha256']}" for f in plan]
    return "\n".join(lines)


def push(out: str | os.PathLike, repo: str, *, token: str | None = None, private: bool = False,
         message: str | None = None, dry_run: bool = False, api=None) -> dict:
    """Upload a built folder to the dataset repository ``repo``, or (``dry_run``, or no token) only plan it.

    Returns ``{"repo", "dry_run", "reason", "message", "files", "commit"}``. Stale files of an earlier push
    under ``data/`` and the JSONL folders are deleted in the same commit.
    """
    out = Path(out)
    plan = upload_plan(out)
    message = message or _commit_message(out)
    if token is None and not dry_run and api is None:
        from huggingface_hub import get_token

        token = get_token()
    reason = "--dry-run" if dry_run else ("no Hugging Face token: set HF_TOKEN or run `hf auth login`"
                                          if token is None and api is None else "")
    result = {"repo": repo, "dry_run": bool(reason), "reason": reason, "message": message, "files": plan,
              "commit": None}
    if reason:
        return result
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    api.create_repo(repo_id=repo, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(repo_id=repo, repo_type="dataset", folder_path=str(out), commit_message=message,
                             allow_patterns=[f["path"] for f in plan],
                             delete_patterns=["data/**", "*.jsonl", "sureon/**", "surghi/**"])
    result["commit"] = getattr(info, "commit_url", None) or str(info)
    return result

