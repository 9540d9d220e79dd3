"""The benchmark data of commands that take several benchmarks' data at once (``leaderboard validate``,
``build``, ``serve``): ``--data [BENCHMARK=]PATH`` values, each benchmark's data loaded once, on first need, with
an error that says which benchmark's data a wrong path is."""

from __future__ import annotations

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData, load_benchmark_data
from ..core.errors import DataError, MedHorizonError
from ..core.settings import env_text

__all__ = ["DataLoader", "data_map"]


def data_map(values: list[str] | None) -> dict[str | None, str]:
    """``--data`` values -> {benchmark: path}; key None for a plain path (every benchmark)."""
    out: dict[str | None, str] = {}
    for v in values or []:
        bench, sep, path = v.partition("=")
        key = bench if sep and bench in BENCHMARKS else None
        path = path if key else v
        if key in out:
            what = f"for {key}" if key else "without a benchmark"
            raise MedHorizonError(f"--data given twice {what}: {out[key]!r} and {path!r}")
        out[key] = path
    return out


class DataLoader:
    """Loads each benchmark's data once, on first need."""

    def __init__(self, values: list[str] | None, hierarchy: str | None):
        self.paths = data_map(values)
        self.hierarchy = hierarchy
        self.cache: dict[str, BenchmarkData] = {}
        self.plain_used: list[str] = []

    def _load(self, bench: str, path: str | None) -> BenchmarkData:
        return load_benchmark_data(bench, path, hierarchy=self.hierarchy if bench == "surghi" else None)

    def _reads_as(self, path: str, bench: str) -> str | None:
        """The other benchmark whose data ``path`` is, if any (asked only once ``path`` failed as ``bench``)."""
        for other in BENCHMARKS:
            if other == bench:
                continue
            try:
                self._load(other, path)
            except MedHorizonError:
                continue
            return other
        return None

    def get(self, bench: str, submission: str | None = None) -> BenchmarkData:
        """``bench``'s data; ``submission``: the file that needs it, named when it is for another benchmark
        than the data given."""
        from ..benchmarks.medhorizon.release import DATA_ENV

        if bench in self.cache:
            return self.cache[bench]
        wrong = f"this is a {bench} submission, not "
        explicit = bench in self.paths
        if explicit:
            path = self.paths[bench]
        else:
            path = self.paths.get(None)
            others = [b for b in BENCHMARKS if b in self.paths]
            if path is None and others and not (bench == "medhorizon" and env_text(DATA_ENV)):
                raise DataError(f"{wrong}{' or '.join(others)}: --data gives {' and '.join(others)} data only; "
                                f"pass --data {bench}=PATH", source=submission)
            if path is not None:
                other = [b for b in self.plain_used if b != bench]
                if other:
                    raise MedHorizonError(f"--data {path} names no benchmark, and the submissions are for "
                                          f"{other[0]} and {bench}: pass --data {other[0]}=PATH --data {bench}=PATH")
                self.plain_used.append(bench)
        try:
            data = self._load(bench, path)
        except DataError as exc:
            other = self._reads_as(path, bench) if path is not None else None
            if other is not None:
                given = f"{bench}={path}" if explicit else path
                raise DataError(f"{wrong}{other}: --data {given} is {BENCHMARK_NAMES[other]} data, not "
                                f"{BENCHMARK_NAMES[bench]} data; pass the {BENCHMARK_NAMES[bench]} data with "
                                f"--data {bench}=PATH", source=submission) from None
            raise DataError(exc.problems, source=f"{bench} data {exc.source or path or ''}".rstrip()) from None
        self.cache[bench] = data
        return data
