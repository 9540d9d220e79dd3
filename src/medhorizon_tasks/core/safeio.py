"""The one layer through which the package reads users' files and writes its own.

Readers (JSON, JSON Lines, CSV/TSV, Parquet, a saved Hugging Face dataset
folder) return plain values or raise ONE :class:`~.errors.DataError` that
names the file and, where there is one, the line and the field, whatever
bytes the file holds:

* text must be UTF-8 (a leading byte-order mark is accepted and dropped);
  an invalid byte is reported with its line;
* JSON may not nest more than :data:`MAX_DEPTH` levels (deeper values make
  ``json`` or any later ``repr`` hit Python's recursion limit), may not hold
  integers of more than :data:`MAX_INT_DIGITS` digits (beyond a float's range,
  and past 4,300 digits Python refuses to convert them at all), and may not
  hold lone surrogates (``"\\ud800"`` decodes, but is not Unicode: writing it
  back as UTF-8 fails);
* a CSV field longer than the ``csv`` module's field limit is reported with
  its line rather than raised as ``csv.Error``;
* Parquet files and dataset folders are read by pyarrow / ``datasets``, whose
  failures (of any exception type) become a DataError naming the path.

Writers are atomic: the content goes to a temporary file in the target's
folder, is flushed to disk (``fsync``) and renamed over the target
(``os.replace``), so a reader sees the old file or the whole new one. The
temporary file is removed on ANY failure, and an ``OSError`` (disk full,
permission denied, a folder where the file should be) becomes a
:class:`WriteError` -- a MedHorizonError, still an ``OSError`` for callers
that catch those -- saying ``cannot write <path>: <reason>``.

No framework imports: numpy, pyarrow and ``datasets`` are imported on first use.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import DataError, MedHorizonError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (command start-up time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "WriteError", "ByPath", "read_bytes", "read_text", "loads_json",
           "read_json", "iter_lines", "iter_jsonl", "iter_csv", "read_parquet_rows", "load_hf_dataset_folder",
           "atomic_write_files", "atomic_write_bytes", "atomic_write_text", "atomic_write_json",
           "atomic_write_jsonl", "atomic_write_with", "append_jsonl", "json_content", "jsonl_content"]

#: Deepest nesting of JSON arrays / objects accepted; real files nest a handful of levels.
MAX_DEPTH = 100
#: Most digits of a JSON integer accepted: up to 10**308 every integer still converts to a float.
MAX_INT_DIGITS = 308

_BOM = b"\xef\xbb\xbf"
# Starts only where a run starts (the look-behind): a run of 308 digits is walked once, not once per offset.
_LONG_DIGITS = re.compile(r"(?<!\d)\d{%d}" % (MAX_INT_DIGITS + 1))
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?")
# JSON digits are ASCII: every byte but 0-9 becomes a space, so a long integer is a run of "0"s
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)


# ------------------------------------------------------------------ reading: files and text

def _read_error(path: Path, exc: OSError) -> DataError:
    if isinstance(exc, FileNotFoundError):
        return DataError(f"file not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return DataError("is a folder, not a file", source=str(path))
    return DataError(f"cannot read ({exc.strerror or exc})", source=str(path))


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes; DataError for a missing file, a folder, or any OS failure to read it."""
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _read_error(path, exc) from None


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB chunks; DataError as :func:`read_bytes`."""
    path = Path(path)
    import hashlib  # here, not at the top: most commands never hash a file (start-up time)

    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise _read_error(path, exc) from None
    return h.hexdigest()


def _line_of(text: str | bytes, pos: int) -> int:
    return text.count("\n" if isinstance(text, str) else b"\n", 0, pos) + 1


def _decode(data: bytes, source: str) -> str:
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise DataError(f"line {_line_of(data, exc.start)}: not UTF-8 text ({exc.reason} at byte "
                        f"{exc.start - line_start + 1} of the line)", source=source) from None


def read_text(path: str | os.PathLike) -> str:
    """The file as text: UTF-8, an optional byte-order mark dropped; DataError names the line of a bad byte."""
    return _decode(read_bytes(path), str(path))


# ------------------------------------------------------------------ reading: JSON

class _BigInt:
    """Stands in for an over-long integer literal until the value's field is known (to name it)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _parse_int(text: str):
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        return _BigInt(text)
    return int(text)


def _show(text: str) -> str:
    """``text`` printable on any terminal: lone surrogates as ``\\udxxx`` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _field(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + _show(part))
    return out


def _first_problem(value: Any) -> tuple[tuple, str, str] | None:
    """``(field path, kind, message)`` of the first over-long integer, lone surrogate or too deep nesting.

    Iterative, so that a deep value cannot exhaust the stack here.
    """
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        v, path = stack.pop()
        if isinstance(v, _BigInt):
            digits = len(v.text) - v.text.startswith("-")
            return path, "int", f"integer with {digits} digits is out of range (at most {MAX_INT_DIGITS} digits)"
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m:
                return path, "surrogate", f"lone surrogate '{_show(m.group())}' in text (not valid Unicode)"
        elif isinstance(v, (dict, list)):
            if len(path) >= MAX_DEPTH:
                return path, "depth", f"JSON nested more than {MAX_DEPTH} levels deep"
            if isinstance(v, dict):
                for k in v:
                    m = _SURROGATE.search(k)
                    if m:
                        return ((*path, k), "surrogate",
                                f"lone surrogate '{_show(m.group())}' in a field name (not valid Unicode)")
                children = list(v.items())
            else:
                children = list(enumerate(v))
            stack.extend((x, (*path, k)) for k, x in reversed(children))
    return None


def _line_of_lone_surrogate(text: str) -> int | None:
    for m in _SURROGATE_ESCAPE.finditer(text):
        i = m.start() - 1
        while i >= 0 and text[i] == "\\":
            i -= 1
        if (m.start() - 1 - i) % 2:  # "\\ud800" is a backslash followed by text, not an escape
            continue
        if int(m.group(1), 16) < 0xDC00 and m.group(2):  # a high + low pair: a real character
            continue
        return _line_of(text, m.start())
    return None


def outside_strings(text: str, *, steps: list | None = None) -> Iterator[tuple[int, str]]:
    """``(offset, text)`` of each stretch of JSON ``text`` outside its strings, in order, in linear time.

    Escapes are two characters (``\\uXXXX`` holds no quote), so once every backslash pair and every escaped
    quote is blanked out (same length: offsets hold), the quotes left open and close strings in turn, found by
    ``str.find`` at C speed. A regular expression for a string would walk an unterminated one from each of its
    quotes again (quadratic). ``steps`` (a one-item list) adds the characters examined, for the tests.
    """
    bare = text.replace("\\\\", "  ").replace('\\"', "  ") if "\\" in text else text
    pos, n = 0, len(bare)
    while pos < n:
        q = bare.find('"', pos)
        end = n if q < 0 else q
        if steps is not None:
            steps[0] += end - pos + 1
        yield pos, text[pos:end]
        if q < 0:
            return
        close = bare.find('"', q + 1)
        if steps is not None:
            steps[0] += (n if close < 0 else close) - q
        if close < 0:
            return
        pos = close + 1


def _line_of_depth(text: str) -> int | None:
    depth = 0
    for start, part in outside_strings(text):
        opens = part.count("[") + part.count("{")
        if depth + opens <= MAX_DEPTH:  # cannot pass the limit here: count at C speed, walk nothing
            depth += opens - part.count("]") - part.count("}")
            continue
        for i, ch in enumerate(part):
            if ch in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return _line_of(text, start + i)
            elif ch in "]}":
                depth -= 1
    return None


def has_long_int(text: str) -> bool:
    """Whether ``text`` holds a run of more than :data:`MAX_INT_DIGITS` ASCII digits (the only digits of a
    JSON number), in linear time at C speed: bytes mapped to "0" or " ", then one substring search (CPython's
    two-way search for a long needle is linear)."""
    return _may_hold_long_digits(text) and _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS_ONLY)


def _may_hold_long_digits(text: str) -> bool:
    """Whether ``text`` may hold a run of more than MAX_INT_DIGITS decimal digits: such a run covers a position
    that is a multiple of its length, so when no character there is a digit (``\\d``: category Nd, as
    ``str.isdecimal``) there is none, and the search, which costs more than parsing the line, is skipped."""
    step = MAX_INT_DIGITS + 1
    return any(text[p].isdecimal() for p in range(0, len(text), step))


def loads_json(text: str, *, source: str, line: int | None = None) -> Any:
    """One JSON value from ``text``; any problem -> DataError from ``source`` naming the line (and field).

    ``line``: the line ``text`` is (JSON Lines); otherwise lines are counted within ``text``.
    """
    long_ints = has_long_int(text)
    try:
        value = json.loads(text, parse_int=_parse_int if long_ints else None)
    except json.JSONDecodeError as exc:
        where = f"line {line}" if line is not None else f"line {exc.lineno}"
        raise DataError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})", source=source) from None
    except RecursionError:
        at = line if line is not None else _line_of_depth(text)
        raise DataError(f"{f'line {at}: ' if at else ''}JSON nested more than {MAX_DEPTH} levels deep",
                        source=source) from None
    except ValueError as exc:  # the int-string conversion limit, should an integer slip past the check
        raise DataError(f"{f'line {line}: ' if line else ''}not valid JSON ({exc})", source=source) from None
    # The walk costs a pass over the value: only when the text could hold one of its problems.
    if long_ints or text.count("[") + text.count("{") > MAX_DEPTH or _SURROGATE_ESCAPE.search(text):
        problem = _first_problem(value)
        if problem is not None:
            path, kind, message = problem
            at = line
            if at is None:
                if kind == "surrogate":
                    at = _line_of_lone_surrogate(text)
                elif kind == "depth":
                    at = _line_of_depth(text)
                else:
                    big = value
                    for part in path:
                        big = big[part]
                    at = _line_of(text, text.find(big.text))
            parts = [f"line {at}"] if at else []
            if path and kind != "depth":
                parts.append(f"field '{_field(path)}'")
            raise DataError(": ".join([*parts, message]), source=source)
    return value


def read_json(path: str | os.PathLike) -> Any:
    """The one JSON value of a file (see :func:`loads_json`)."""
    return loads_json(read_text(path), source=str(path))


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a UTF-8 text file, its end of line removed; DataError names
    the line of a bad byte.

    Lines end at ``\\n`` only (a ``\\r`` before it is dropped): unlike ``str.splitlines``, U+2028, U+0085,
    form feeds and lone ``\\r`` are characters of the line, as they are to ``sha256sum``, ``csv`` and JSON.
    The file is read as it is iterated.
    """
    path = Path(path)
    source = str(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise _read_error(path, exc) from None
    with fh:
        n = 0
        while True:
            try:
                raw = fh.readline()
            except OSError as exc:
                raise _read_error(path, exc) from None
            if not raw:
                return
            n += 1
            if n == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"line {n}: not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)",
                                source=source) from None
            yield n, text.removesuffix("\n").removesuffix("\r")


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON Lines file; DataError names the line.

    Lines are :func:`iter_lines`' (a ``\\r`` before the ``\\n`` is JSON white space anyway).
    """
    source = str(path)
    for n, text in iter_lines(path):
        if text.strip():
            yield n, loads_json(text, source=source, line=n)


# ------------------------------------------------------------------ reading: tables

def iter_csv(path: str | os.PathLike, delimiter: str = ",", *,
             required: Sequence[str] = ()) -> Iterator[tuple[int, dict]]:
    """``(line number, {column: text})`` of every record of a CSV / TSV file with a header row.

    ``required``: columns the header must have (DataError naming the missing ones). A record
    spanning several lines is numbered by its last line, as ``csv`` counts.
    """
    source = str(path)
    text = read_text(path)
    import csv  # here: only table readers need it (start-up time)

    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)

    def error(exc: csv.Error) -> DataError:
        line = reader.reader.line_num  # DictReader's own count is only updated after a good record
        if "field limit" in str(exc):
            return DataError(f"line {line}: a field is longer than {csv.field_size_limit()} characters "
                             "(the CSV field size limit)", source=source)
        return DataError(f"line {line}: not valid CSV ({exc})", source=source)

    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise error(exc) from None
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"header: missing column(s) {', '.join(missing)} (expected {', '.join(required)})",
                        source=source)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise error(exc) from None
        yield reader.line_num, row


def _describe(exc: BaseException) -> str:
    text = _show(str(exc)).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__


def _require_file(path: Path) -> None:
    if path.is_dir():
        raise DataError("is a folder, not a file", source=str(path))
    if not path.exists():
        raise DataError(f"file not found: {path}")


def read_parquet_rows(path: str | os.PathLike) -> list[dict]:
    """The rows of a Parquet file as dicts; a damaged or non-Parquet file -> DataError naming it."""
    path = Path(path)
    _require_file(path)
    try:
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, UnicodeDecodeError, ... for damaged files
        raise DataError(f"not a readable Parquet file ({_describe(exc)})", source=str(path)) from None


def load_hf_dataset_folder(path: str | os.PathLike, split: str = "test") -> list[dict]:
    """The rows of a folder written by ``datasets``' ``save_to_disk``: a Dataset, or a DatasetDict's
    ``split`` (else its first split). Anything ``load_from_disk`` cannot read -> DataError naming the folder."""
    path = Path(path)
    if not path.is_dir():
        _require_file(path)
        raise DataError("not a dataset folder", source=str(path))
    try:
        from datasets import load_from_disk

        ds = load_from_disk(str(path))
        if hasattr(ds, "keys"):  # a DatasetDict
            ds = ds[split] if split in ds else ds[next(iter(ds.keys()))]
        return ds.to_list()
    except Exception as exc:  # datasets / pyarrow / json raise many types for a damaged or partial folder
        raise DataError(f"not a readable dataset folder (datasets.load_from_disk: {_describe(exc)})",
                        source=str(path)) from None


# ------------------------------------------------------------------ writing

class WriteError(MedHorizonError, OSError):
    """A file that could not be written: ``cannot write <path>: <reason>``. Also an OSError (``errno`` kept)."""

    def __init__(self, message: str, errno: int | None = None):
        super().__init__(message)
        self.errno = errno

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self):  # across processes (prepare-frames' workers) with its errno
        return type(self), (str(self), self.errno)


def _write_error(path: Path, exc: BaseException) -> WriteError:
    if isinstance(exc, WriteError):
        return exc
    if isinstance(exc, OSError):
        return WriteError(f"cannot write {path}: {exc.strerror or exc}", exc.errno)
    return WriteError(f"cannot write {path}: {exc}")


@dataclass(frozen=True)
class ByPath:
    """Content that ``write(path)`` puts in the file itself (for a library that wants a file name,
    such as matplotlib's ``savefig``); it is handed the temporary file's path."""

    write: Callable[[Path], object]


Content = bytes | str | ByPath | Callable[[object], object]


class _FdFile:
    """A minimal binary file over a descriptor: every byte goes through ``os.write`` (one write path)."""

    def __init__(self, fd: int):
        self.fd = fd

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        return total

    def flush(self) -> None:
        pass


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stage(tmp: Path, content: Content, mode: int | None) -> None:
    if isinstance(content, ByPath):
        content.write(tmp)
        _fsync_path(tmp)
    else:
        # 0o666 and O_EXCL: the file gets the user's umask (mkstemp's 0600 would hide a shared result)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            f = _FdFile(fd)
            if isinstance(content, (bytes, bytearray, memoryview)):
                f.write(content)
            elif isinstance(content, str):
                f.write(content.encode("utf-8"))
            else:
                content(f)
            # On disk before the rename: after a crash the target is the old file or the whole new one.
            os.fsync(fd)
        finally:
            os.close(fd)
    if mode is not None:
        os.chmod(tmp, mode)


def atomic_write_files(files: Mapping[str | os.PathLike, Content], *, mode: int | None = None) -> list[Path]:
    """Write several files all or nothing: every one is staged (temporary file, fsync) before any is renamed
    into place, so a full disk leaves every target as it was. Content: bytes, text (UTF-8), a callable
    writing into a binary file object, or :class:`ByPath`. Parent folders are created. Any failure
    removes every temporary file; an OSError becomes :class:`WriteError` naming the target."""
    staged: list[tuple[Path, Path]] = []
    try:
        for target, content in files.items():
            path = Path(target)
            tmp = _tmp_path(path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                staged.append((path, tmp))
                _stage(tmp, content, mode)
            except OSError as exc:
                raise _write_error(path, exc) from None
            except UnicodeEncodeError as exc:
                raise WriteError(f"cannot write {path}: text is not valid Unicode ({exc.reason} at character "
                                 f"{exc.start})") from None
        for path, tmp in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise _write_error(path, exc) from None
    except BaseException:
        for _, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    return [path for path, _ in staged]


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> Path:
    return atomic_write_files({path: bytes(data)}, mode=mode)[0]


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """``text`` as UTF-8, atomically."""
    return atomic_write_files({path: text})[0]


def atomic_write_with(path: str | os.PathLike, write: Callable[[Any], object], *, mode: int | None = None) -> Path:
    """``write(file)`` into a binary file object, atomically (e.g. ``numpy.save``)."""
    return atomic_write_files({path: write}, mode=mode)[0]


def _json_line(path: Path, record: Any, n: int | None, **kwargs) -> bytes:
    try:  # allow_nan=False: a bare NaN / Infinity is not JSON, and no reader but Python's takes it
        text = json.dumps(record, allow_nan=False, **kwargs)
    except (TypeError, ValueError, RecursionError) as exc:
        what = f"record {n}" if n is not None else "the record"
        raise WriteError(f"cannot write {path}: {what} is not JSON ({exc})") from None
    # A lone surrogate can only sit inside a JSON string, where "\udxxx" is its own JSON escape: the
    # file stays valid UTF-8 and reads back to the very same text.
    return text.encode("utf-8", "backslashreplace")


def jsonl_content(path: str | os.PathLike, records: Iterable[Any]) -> Callable[[Any], None]:
    """JSON Lines (UTF-8, sorted keys) as content for :func:`atomic_write_files` (to write it together with
    other files); a record that is not JSON -> WriteError naming ``path`` and the record."""
    path = Path(path)

    def write(f) -> None:
        chunk: list[bytes] = []
        size = 0
        for n, rec in enumerate(records, 1):
            line = _json_line(path, rec, n, ensure_ascii=False, sort_keys=True) + b"\n"
            chunk.append(line)
            size += len(line)
            if size >= 1 << 20:
                f.write(b"".join(chunk))
                chunk, size = [], 0
        f.write(b"".join(chunk))

    return write


def json_content(path: str | os.PathLike, value: Any, *, indent: int | None = 2, **kwargs) -> bytes:
    """One JSON value (UTF-8, ``ensure_ascii=False``) as content for :func:`atomic_write_files`."""
    return _json_line(Path(path), value, None, indent=indent, ensure_ascii=False, **kwargs) + b"\n"


def atomic_write_json(path: str | os.PathLike, value: Any, *, indent: int | None = 2, **kwargs) -> Path:
    """One JSON value (UTF-8, ``ensure_ascii=False``), atomically."""
    return atomic_write_files({path: json_content(path, value, indent=indent, **kwargs)})[0]


def atomic_write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> Path:
    """JSON Lines (UTF-8, sorted keys), atomically; a record that is not JSON -> WriteError naming it."""
    return atomic_write_files({path: jsonl_content(path, records)})[0]


def append_jsonl(path: str | os.PathLike, record: Any) -> None:
    """Append one record and fsync it, so an interrupted run loses at most the line being written."""
    path = Path(path)
    line = _json_line(path, record, None, ensure_ascii=False, sort_keys=True) + b"\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            _FdFile(fd).write(line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _write_error(path, exc) from None
