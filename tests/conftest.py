"""Shared fixtures: the embedded synthetic benchmark is built once per test session."""

import os
import time

import pytest

from medhorizon_tasks.data import synthetic as S


@pytest.fixture(scope="session")
def synthetic_build(tmp_path_factory):
    """(SyntheticBenchmark, build seconds), in a private folder that subprocesses also use."""
    root = tmp_path_factory.mktemp("synthetic") / "bench"
    t0 = time.perf_counter()
    bench = S.build_synthetic(root, seed=0, progress=False)
    seconds = time.perf_counter() - t0
    os.environ["MEDHORIZON_SYNTHETIC_DIR"] = str(root)
    return bench, seconds


@pytest.fixture(scope="session")
def synthetic(synthetic_build):
    return synthetic_build[0]
