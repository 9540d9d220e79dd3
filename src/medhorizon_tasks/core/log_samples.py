"""Lines of an lmms-eval ``--log_samples`` file, read as plain JSON (no lmms-eval import)."""

from __future__ import annotations


def is_lmms_sample(rec) -> bool:
    """Whether a JSON line looks like an lmms-eval sample (``doc_id`` and the model's responses)."""
    return isinstance(rec, dict) and "doc_id" in rec and ("resps" in rec or "filtered_resps" in rec)


def _first_text(value):
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def response_text(rec: dict) -> str | None:
    """The model's text in a sample: the filtered response if lmms-eval logged one, else the raw one."""
    if rec.get("filtered_resps") is not None:
        return _first_text(rec.get("filtered_resps"))
    return _first_text(rec.get("resps"))


def run_description(samples_path) -> dict | None:
    """What lmms-eval recorded about the run that wrote a ``<stamp>_samples_<task>.jsonl`` file, read from
    the ``<stamp>_results.json`` beside it: ``{"model", "model_args", "task", "kwargs"}`` (``kwargs``: the
    task's ``lmms_eval_specific_kwargs``), or None when there is no such file."""
    import re
    from pathlib import Path

    from .errors import DataError
    from .safeio import read_json

    path = Path(samples_path)
    m = re.fullmatch(r"(.+)_samples_(.+)\.jsonl", path.name)
    if m is None:
        return None
    results = path.with_name(f"{m.group(1)}_results.json")
    if not results.is_file():
        return None
    try:
        data = read_json(results)
    except DataError:
        return None
    if not isinstance(data, dict):
        return None
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    task_config = (data.get("configs") or {}).get(m.group(2)) if isinstance(data.get("configs"), dict) else None
    kwargs = task_config.get("lmms_eval_specific_kwargs") if isinstance(task_config, dict) else None
    if isinstance(kwargs, dict) and isinstance(kwargs.get("default"), dict):
        kwargs = {**kwargs["default"], **{k: v for k, v in kwargs.items() if k != "default"}}
    return {"model": str(config.get("model") or data.get("model_name") or ""),
            "model_args": str(config.get("model_args") or ""), "task": m.group(2),
            "kwargs": kwargs if isinstance(kwargs, dict) else {}}


def model_label(description: dict) -> str:
    """``qwen2_5_vl (Qwen2.5-VL-7B-Instruct)``: the model name and the checkpoint it loaded, if any."""
    label = description.get("model") or "?"
    for part in str(description.get("model_args") or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() in ("pretrained", "model_version", "model", "inner") and value.strip():
            return f"{label} ({value.strip().rstrip('/').split('/')[-1]})"
    return label
