"""lmms-eval task YAMLs of medhorizon-tasks (installed as package data; see `medhorizon-tasks task-path`)."""
