"""The package list, found rather than written by hand.

Every package under ``src/`` is found by setuptools, so a new sub-package cannot be
left out of a normal (non-editable) install. The two data packages that live at
the top level (``task_yaml/``, ``hf_dataset_card/``) are added by name: pyproject's
``packages.find`` names a package after its folder under ``where``, which cannot
express them; their folders are mapped in pyproject.toml's ``package-dir``.
Everything else about the build is in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(packages=find_packages("src") + ["medhorizon_tasks.task_yaml", "medhorizon_tasks.hf_dataset_card"])
