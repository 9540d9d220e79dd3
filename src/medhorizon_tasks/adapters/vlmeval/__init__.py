"""VLMEvalKit adapter: the three protocols as VLMEvalKit datasets, the probe models, and one launcher.

- :mod:`.presets`: the ``--data`` names and their frame settings, as data (each the twin of an lmms-eval task);
- :mod:`.datasets`: one ``VideoBaseDataset`` per benchmark, calling the benchmark functions the lmms-eval
  hooks call; :mod:`.frames`: the planned frames as PNG files and the video outcomes beside the predictions;
- :mod:`.models`: ``medhorizon_random`` / ``medhorizon_needle``;
- :mod:`.register`: the in-place registration VLMEvalKit needs (it has no plugin mechanism);
- :mod:`.launch`: ``medhorizon-tasks vlmeval <VLMEvalKit arguments>`` (:func:`run_cli`), with pre-flight,
  stale-prediction guard (:mod:`.stamp`) and an honest exit status.

Only :mod:`.datasets`, :mod:`.models` and :mod:`.register` import VLMEvalKit (~30 s); the launcher loads them
after its checks.
"""

from .launch import run_cli

__all__ = ["run_cli"]
