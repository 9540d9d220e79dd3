"""medhorizon-tasks: long medical-video evaluation protocols (MedHorizon, Sureon,
SurgHiBench) for lmms-eval and VLMEvalKit.

Layers (dependencies point one way): ``commands`` -> ``adapters`` / ``runs`` ->
``benchmarks`` -> ``core``; ``data``, ``leaderboard`` and ``plots`` sit beside the
adapters. Nothing outside ``adapters`` imports a framework, and nothing in ``core``
imports anything above it.
"""

from .core.version import __version__

__all__ = ["__version__"]
