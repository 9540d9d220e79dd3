"""Putting this package into VLMEvalKit, which has no plugin mechanism: all the patching, in one place.

VLMEvalKit resolves ``--data NAME`` through the module-level registries of
``vlmeval.dataset`` (``DATASET_CLASSES``, ``SUPPORTED_DATASETS``,
``supported_video_datasets``) and ``--model NAME`` through
``vlmeval.config.supported_VLM``; ``--config`` accepts a ``"class"`` only when it
is an attribute of ``vlmeval.dataset`` / ``vlmeval.vlm``. ``run.py`` and
``inference_video.py`` import those objects by name, so they are extended IN
PLACE (rebinding a name would change nothing they see). Measured against
ms-vlmeval 0.0.20 and an upstream git checkout (:mod:`.versions`): both install
the module ``vlmeval``; ``run.py`` is ``vlmeval.run`` in the first and the
checkout's root ``run.py`` in the second (:func:`.versions.run_module`).

Two behaviours of ``run.py`` are adjusted while it runs:

* the prediction file a dataset's prompts are built for is handed to the
  dataset (:func:`_with_outcome_log`), so video outcomes are written beside it;
* ``torch.distributed`` gets ``gloo`` instead of the hard-coded ``nccl`` when
  no GPU is visible (:func:`use_gloo_without_gpu`), so
  ``torchrun --nproc-per-node N`` also works on CPU.
"""

from __future__ import annotations

import functools
import os
import ssl

__all__ = ["register", "use_gloo_without_gpu", "plugin_models", "PLUGIN_GROUP"]

_done = False


def register() -> None:
    """Idempotent; imports VLMEvalKit (~30 s, ~1 GB)."""
    global _done
    if _done:
        return
    import vlmeval.config
    import vlmeval.dataset
    import vlmeval.vlm
    from vlmeval.dataset.video_dataset_config import supported_video_datasets

    from .versions import run_module

    run = run_module()

    # `import vlmeval` turns off certificate checks for the whole process (for its own downloads); the
    # judge this package may call must not inherit that.
    ssl._create_default_https_context = ssl.create_default_context

    from .datasets import DATASET_CLASSES
    from .models import CLASS_NAMES, MODELS

    for cls in DATASET_CLASSES:
        if cls not in vlmeval.dataset.DATASET_CLASSES:
            vlmeval.dataset.DATASET_CLASSES.append(cls)
        setattr(vlmeval.dataset, cls.__name__, cls)
        for name in cls.supported_datasets():
            if name not in vlmeval.dataset.SUPPORTED_DATASETS:
                vlmeval.dataset.SUPPORTED_DATASETS.append(name)
            supported_video_datasets[name] = functools.partial(cls, dataset=name)
    for name, cls in MODELS.items():
        vlmeval.config.supported_VLM[name] = functools.partial(cls)
        setattr(vlmeval.vlm, CLASS_NAMES[cls], cls)
    for name, cls in plugin_models().items():  # other packages' models (docs/extending.md)
        vlmeval.config.supported_VLM[name] = functools.partial(cls)
        setattr(vlmeval.vlm, cls.__name__, cls)
    run.infer_data_job_video = _with_outcome_log(run.infer_data_job_video)
    _done = True


#: The entry point group through which other packages add VLMEvalKit models: ``name = "pkg.module:Class"``.
PLUGIN_GROUP = "medhorizon_tasks.vlmeval_models"


def plugin_models() -> dict:
    """``{name: class}`` of every installed :data:`PLUGIN_GROUP` entry point (loaded: VLMEvalKit is imported)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.load() for ep in entry_points(group=PLUGIN_GROUP)}


def _with_outcome_log(infer):
    """``infer_data_job_video`` telling our datasets which prediction file their prompts are for."""
    if getattr(infer, "_medhorizon_outcomes", False):
        return infer

    @functools.wraps(infer)
    def infer_data_job_video(model, work_dir, model_name, dataset, *args, **kwargs):
        from vlmeval.smp import get_pred_file_path

        from .datasets import ProtocolDataset
        from .frames import OutcomeLog, outcome_log_path

        if isinstance(dataset, ProtocolDataset):
            result = kwargs.get("result_file") or kwargs.get("result_file_name")
            if result and not os.path.isabs(result) and os.path.dirname(result) == "":
                result = os.path.join(work_dir, result)
            result = result or get_pred_file_path(work_dir, model_name, dataset.dataset_name)
            dataset.outcome_log = OutcomeLog(outcome_log_path(result))
        return infer(model, work_dir, model_name, dataset, *args, **kwargs)

    infer_data_job_video._medhorizon_outcomes = True
    return infer_data_job_video


def use_gloo_without_gpu() -> None:
    """``dist.init_process_group(backend='nccl')`` -> ``gloo`` when CUDA is not available."""
    import torch
    import torch.distributed as dist

    if torch.cuda.is_available() or getattr(dist.init_process_group, "_medhorizon_gloo", False):
        return
    original = dist.init_process_group

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        if kwargs.get("backend") == "nccl":
            kwargs["backend"] = "gloo"
        elif args and args[0] == "nccl":
            args = ("gloo", *args[1:])
        return original(*args, **kwargs)

    init_process_group._medhorizon_gloo = True
    dist.init_process_group = init_process_group
