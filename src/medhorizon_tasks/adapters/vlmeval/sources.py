"""Where a preset's data and videos are: the environment variables of the lmms-eval tasks, or the synthetic sets.

Release data: ``MEDHORIZON_DATA`` / ``SUREON_DATA`` / ``SURGHI_DATA`` (and
``SURGHI_HIERARCHY``); videos under ``<BENCHMARK>_VIDEO_ROOT``, else the data's
folder -- :func:`medhorizon_tasks.runs.preflight.default_root`, the rule the
pre-flight checks the videos with. Synthetic presets build (once, cached) the
embedded synthetic benchmark / Sureon sample / SurgHiBench sample, as the
lmms-eval ``*_synthetic`` tasks do. Nothing here imports VLMEvalKit, so the
launcher can use it before the framework is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...benchmarks.surghi.frames import hierarchy_file_for
from ...benchmarks.videos import SOURCES, default_root
from ...core.errors import MedHorizonError
from ...core.settings import env_text
from .presets import Preset

__all__ = ["DataSource", "locate", "data_version_of"]

@dataclass(frozen=True)
class DataSource:
    data: Path
    video_root: Path
    hierarchy: Path | None = None  # SurgHiBench only


def locate(preset: Preset) -> DataSource:
    """The data and video root of ``preset`` (building a synthetic set when it is one)."""
    if preset.synthetic:
        if preset.benchmark == "medhorizon":
            from ...data.synthetic.medhorizon import build_synthetic

            bench = build_synthetic(progress=False)
            return DataSource(bench.data_path, bench.video_root)
        if preset.benchmark == "sureon":
            from ...data.synthetic.sureon import build_sureon_sample

            sample = build_sureon_sample()
            return DataSource(sample.data_path, sample.video_root)
        from ...data.synthetic.surghi import build_surghi_sample

        sg = build_surghi_sample()
        return DataSource(sg.annotations_path, sg.video_root, sg.hierarchy_path)
    src = SOURCES[preset.benchmark]
    value = env_text(src.data_env)
    if not value:
        raise MedHorizonError(f"dataset {preset.name} needs {src.what}: set {src.data_env}=/path/to/it and "
                              f"{src.root_env}=/path/to/videos; for the embedded synthetic data use "
                              f"{preset.name.replace(_family(preset), _family(preset) + '_Synthetic', 1)}")
    data = Path(value).expanduser()
    root = default_root(preset.benchmark, data)
    return DataSource(data, root, hierarchy_file_for(data) if preset.benchmark == "surghi" else None)


def _family(preset: Preset) -> str:
    return preset.name.split("_", 1)[0]


def data_version_of(preset: Preset, source: DataSource | None = None) -> str:
    """The leaderboard data version (:func:`medhorizon_tasks.benchmarks.data.data_version`) of the preset's data
    (``source``: where it is, when already located)."""
    from ...benchmarks.data import data_version

    source = source if source is not None else locate(preset)
    return data_version(preset.benchmark, source.data, hierarchy=source.hierarchy)
