"""This package's VLMEvalKit dataset names, as data (no VLMEvalKit import).

A preset is one ``--data`` name: a benchmark, where its data come from (the
release named by the benchmark's environment variable, or the embedded
synthetic set) and its frame setting -- the very ``lmms_eval_specific_kwargs``
of the lmms-eval task with the same protocol (``lmms_task``), so the two
frameworks cannot drift apart without ``tests/test_vlmeval_units.py`` noticing.
The MedHorizon diagnostics come from
:data:`medhorizon_tasks.benchmarks.medhorizon.diagnostics.DIAGNOSTICS`, the
table the lmms-eval diagnostic YAMLs are generated from.

Names: ``MedHorizon_cap{64,128,256,512,1248}``, ``MedHorizon_text``,
``MedHorizon_oracle``, ``MedHorizon_frames{4..512}``,
``MedHorizon_order_{original,reverse,block_shuffle,local_shuffle}``,
``MedHorizon_sampling_{uniform,frame_change,hybrid}_{32,64}``; ``Sureon_visual``,
``Sureon_blind``, ``Sureon_visual_noblur``; ``SurgHiBench``; each also as ``<Benchmark>_Synthetic...`` on
the embedded synthetic data (``MedHorizon_Synthetic_cap64``,
``Sureon_Synthetic_blind``, ``SurgHiBench_Synthetic``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...benchmarks.medhorizon.diagnostics import FRAME_PIXELS, generated_variants

__all__ = ["Preset", "PRESETS", "CAPS", "preset", "presets_of"]

CAPS = (64, 128, 256, 512, 1248)  # the paper's cap settings (Table 2 uses 64; 1248 is the largest)


@dataclass(frozen=True)
class Preset:
    name: str                   # the VLMEvalKit --data name
    benchmark: str              # medhorizon | sureon | surghi
    synthetic: bool             # the embedded synthetic data instead of the user's release
    kwargs: dict = field(hash=False)  # the lmms-eval twin's lmms_eval_specific_kwargs
    lmms_task: str | None = None

    @property
    def shows_frames(self) -> bool:
        return self.kwargs.get("mode", "visual") in ("visual", "oracle")


def _medhorizon() -> list[Preset]:
    visual = {"mode": "visual", "fps": 1, "frame_pixels": FRAME_PIXELS}
    rows: list[tuple[str, dict, str | None, str | None]] = []  # suffix, kwargs, lmms twin, synthetic twin
    for cap in CAPS:
        twin = "medhorizon" if cap == 64 else f"medhorizon_cap{cap}"
        rows.append((f"cap{cap}", {**visual, "cap": cap}, twin, "medhorizon_synthetic" if cap == 64 else None))
    rows.append(("text", {"mode": "text"}, "medhorizon_text", "medhorizon_synthetic_text"))
    rows.append(("oracle", {"mode": "oracle", "fps": 1, "cap": 64, "frame_pixels": FRAME_PIXELS}, "medhorizon_oracle",
                 "medhorizon_synthetic_oracle"))
    for v in generated_variants():
        rows.append((v.suffix, dict(v.kwargs), v.task(False), v.task(True)))
    out = []
    for suffix, kwargs, twin, synthetic_twin in rows:
        out.append(Preset(f"MedHorizon_{suffix}", "medhorizon", False, kwargs, twin))
        out.append(Preset(f"MedHorizon_Synthetic_{suffix}", "medhorizon", True, kwargs, synthetic_twin))
    return out


def _sureon() -> list[Preset]:
    # visual blurs text and faces (the paper's pass; $SUREON_BLUR=0 turns it off), visual_noblur never does
    variants = (("visual", {"mode": "visual"}), ("blind", {"mode": "blind"}),
                ("visual_noblur", {"mode": "visual", "blur": False}))
    return [Preset(f"Sureon{'_Synthetic' if syn else ''}_{suffix}", "sureon", syn, kwargs,
                   f"sureon{'_synthetic' if syn else ''}_{suffix}")
            for syn in (False, True) for suffix, kwargs in variants]


def _surghi() -> list[Preset]:
    window = {"window_half_width_s": 4.0, "window_fps": 1.0}
    return [Preset("SurgHiBench", "surghi", False, window, "surghi"),
            Preset("SurgHiBench_Synthetic", "surghi", True, window, "surghi_synthetic")]


PRESETS: dict[str, Preset] = {p.name: p for p in _medhorizon() + _sureon() + _surghi()}


def preset(name: str) -> Preset | None:
    return PRESETS.get(name)


def presets_of(benchmark: str) -> list[str]:
    return [name for name, p in PRESETS.items() if p.benchmark == benchmark]
