"""medhorizon-tasks: long medical-video evaluation protocols (MedHorizon, Sureon,
SurgHiBench) for lmms-eval and VLMEvalKit.

Layers (dependencies point one way): ``adapters`` -> ``benchmarks`` -> core
(``errors``, ``jsonl``, ``paths``, ``sampling``, ``video``, ``extract``,
``stats``). Nothing outside ``adapters`` imports a framework.
"""

__version__ = "0.1.0"
