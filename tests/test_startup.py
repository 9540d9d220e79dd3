"""What the package does as lmms-eval starts (``adapters/lmms_eval/startup.py``), in process: the task folder
is added to the search path of the lmms-eval versions it was tested with, once, and only there. The real
CLI runs (``lmms-eval --tasks medhorizon_synthetic``, ``--tasks list``) are in ``test_truthful_run.py``."""

import os

import pytest
from lmms_eval.tasks import TaskManager

from medhorizon_tasks.adapters.lmms_eval import startup
from medhorizon_tasks.adapters.lmms_eval.runner import task_path


@pytest.fixture
def recording(monkeypatch):
    """``TaskManager.initialize_tasks`` replaced by one that records the search paths it is given."""
    calls = []

    def initialize_tasks(self, include_path=None, include_defaults=True):
        calls.append(include_path)

    monkeypatch.setattr(TaskManager, "initialize_tasks", initialize_tasks)
    monkeypatch.delenv(startup.NO_AUTO_TASKS_ENV, raising=False)
    return calls


def _ours(paths):
    return [p for p in paths if os.path.realpath(p) == os.path.realpath(task_path())]


def test_the_task_folder_is_added_once_on_a_tested_version(recording, monkeypatch):
    monkeypatch.setattr(startup, "lmms_eval_version", lambda: "0.7.3")
    startup._add_task_folder()
    startup._add_task_folder()  # a second install does not wrap the wrapper
    TaskManager.initialize_tasks(object())
    TaskManager.initialize_tasks(object(), include_path="/my/tasks")
    TaskManager.initialize_tasks(object(), include_path=[str(task_path())])  # --include_path "$(... task-path)"
    assert [len(_ours(c)) for c in recording] == [1, 1, 1]
    assert "/my/tasks" in recording[1]


def test_an_untested_version_is_left_alone_and_says_so(recording, monkeypatch, capsys):
    before = TaskManager.initialize_tasks
    monkeypatch.setattr(startup, "lmms_eval_version", lambda: "0.8.0")
    startup._add_task_folder()
    assert TaskManager.initialize_tasks is before
    err = capsys.readouterr().err
    assert "lmms-eval 0.8.0 is outside the supported range >=0.6.0,<0.8" in err and "--include_path" in err


def test_the_oldest_supported_version_gets_the_task_folder_too(recording, monkeypatch):
    monkeypatch.setattr(startup, "lmms_eval_version", lambda: "0.6.1")
    startup._add_task_folder()
    TaskManager.initialize_tasks(object())
    assert [len(_ours(c)) for c in recording] == [1]


def test_a_task_field_the_installed_taskconfig_lacks_is_dropped_for_our_tasks_only(monkeypatch):
    """lmms-eval 0.6's TaskConfig has no reasoning_tags, which the task YAMLs set: without the field it would
    refuse every task of this package (``unexpected keyword argument``)."""
    import dataclasses

    import lmms_eval.api.task

    from medhorizon_tasks.adapters.lmms_eval import versions

    @dataclasses.dataclass
    class TaskConfig(dict):  # 0.6's shape: no reasoning_tags
        task: str = None
        dataset_kwargs: dict = None
        metadata: dict = None

    monkeypatch.setattr(lmms_eval.api.task, "TaskConfig", TaskConfig)
    assert versions.drop_unknown_task_fields() == ["reasoning_tags"]
    assert versions.drop_unknown_task_fields() == ["reasoning_tags"]  # idempotent: not wrapped twice
    assert TaskConfig(task="medhorizon_synthetic", reasoning_tags="none").task == "medhorizon_synthetic"
    with pytest.raises(TypeError, match="reasoning_tags"):
        TaskConfig(task="videomme", reasoning_tags="none")  # another package's task: lmms-eval's own behaviour
    assert not hasattr(TaskConfig.__init__.__wrapped__, "_medhorizon_fields")  # one wrapper, over the original
    # the placeholder data file is found from any working directory (lmms-eval < 0.7.3 reads it from there)
    files = {"test": "_placeholder.jsonl"}
    ours = TaskConfig(task="medhorizon_synthetic", dataset_kwargs={"data_files": files})
    assert ours.dataset_kwargs["data_files"]["test"] == str(task_path() / "_placeholder.jsonl")
    assert TaskConfig(task="videomme", dataset_kwargs={"data_files": files}).dataset_kwargs["data_files"] == files


def test_the_opt_out_leaves_lmms_eval_alone(recording, monkeypatch):
    before = TaskManager.initialize_tasks
    monkeypatch.setenv(startup.NO_AUTO_TASKS_ENV, "1")
    monkeypatch.setattr(startup, "lmms_eval_version", lambda: "0.7.3")
    startup._add_task_folder()
    assert TaskManager.initialize_tasks is before
