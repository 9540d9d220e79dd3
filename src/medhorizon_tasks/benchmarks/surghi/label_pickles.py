"""Reading MultiBypass140's 1 FPS split pickles without trusting them.

A pickle is a program: the standard loader runs any callable the file names, and even a loader that names
none can be made to work for hours by a file of a few kilobytes (dict keys that all hash alike make every
insertion scan every earlier key; references to one list from a million places make a walk over the value
a billion steps). So the files are read by :func:`load_label_pickle`:

* only the containers and scalars the real files hold (``{video: [{Frame_id, Original_frame_id, Phase_gt,
  Step_gt, unique_id}]}``, ``shared/reference/upstream_datasets.md``): dicts with text keys, lists, tuples,
  text, numbers, ``True`` / ``False`` / ``None``, and NumPy's numeric scalars; no other global is
  found, no set, no persistent id, no extension code;
* by the pure-Python unpickler, each opcode counted: at most :data:`MAX_OPS` opcodes and
  :data:`MAX_BYTES` bytes a file, so the work and the memory are bounded whatever the bytes;
* then :func:`frame_records` walks the value only as deep as that shape goes, counting records (a list
  referenced twice counts twice) up to a bound, and shows a bad value by a bounded ``reprlib`` summary.
"""

from __future__ import annotations

import io
import os
import pickle
import reprlib
from collections.abc import Iterator
from pathlib import Path

from ...core.errors import DataError
from ...core.safeio import read_bytes

__all__ = ["MAX_BYTES", "MAX_OPS", "MAX_RECORDS", "load_label_pickle", "frame_records", "shown"]

#: Largest pickle read: the real split pickles are a few MB each.
MAX_BYTES = 128 << 20
#: Most opcodes one pickle may run (a frame record is about a dozen; a real file holds ~1e5 records).
MAX_OPS = 10_000_000
#: Most frame records over all the pickles of one import (MultiBypass140 has ~0.6 M seconds of video).
MAX_RECORDS = 5_000_000

_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother, _SHOW.maxdict, _SHOW.maxlist = 2, 60, 60, 4, 4


def shown(value) -> str:
    """A bounded summary of any value (a few levels, a few entries, short text): safe on hostile values."""
    return _SHOW.repr(value)


def _latin1(text, encoding="latin1"):
    """``_codecs.encode`` as protocol-2 pickles use it for bytes (NumPy scalars' data): latin-1 only."""
    if not isinstance(text, str) or encoding.replace("-", "").lower() not in ("latin1", "iso88591"):
        raise pickle.UnpicklingError("refusing _codecs.encode other than of text to latin-1")
    return text.encode("latin-1")


def _np_dtype(spec, *args):
    import numpy as np

    if not isinstance(spec, str) or len(spec) > 4:
        raise pickle.UnpicklingError(f"refusing numpy.dtype({shown(spec)}): only numeric scalar types")
    dtype = np.dtype(spec)
    if dtype.kind not in "biuf" or dtype.itemsize > 16:
        raise pickle.UnpicklingError(f"refusing numpy.dtype({spec!r}): only numeric scalar types")
    return dtype


def _np_scalar(dtype, data=b""):
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.kind not in "biuf" or not isinstance(data, bytes) \
            or len(data) != dtype.itemsize:
        raise pickle.UnpicklingError("refusing a NumPy scalar that is not a plain number")
    return np.frombuffer(data, dtype=dtype)[0]


_GLOBALS = {("_codecs", "encode"): _latin1, ("numpy", "dtype"): _np_dtype,
            ("numpy.core.multiarray", "scalar"): _np_scalar, ("numpy._core.multiarray", "scalar"): _np_scalar}
_REFUSED = {pickle.EMPTY_SET, pickle.ADDITEMS, pickle.FROZENSET, pickle.PERSID, pickle.BINPERSID, pickle.EXT1,
            pickle.EXT2, pickle.EXT4, pickle.INST, pickle.OBJ, pickle.NEWOBJ, pickle.NEWOBJ_EX, pickle.BYTEARRAY8,
            pickle.NEXT_BUFFER, pickle.READONLY_BUFFER}


def _text_key(key) -> None:
    if type(key) is not str:
        raise pickle.UnpicklingError(f"refusing a dict key that is not text ({shown(key)})")


class _PlainUnpickler(pickle._Unpickler):
    """The pure-Python unpickler (every opcode passes through ``dispatch``), restricted as the module says."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.ops = 0

    def find_class(self, module, name):
        found = _GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} (only plain data is accepted)")
        return found

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refusing a persistent id")

    # dicts: every key is checked before it is inserted (numbers that all hash alike would make each
    # insertion scan every earlier key)
    def load_dict(self):
        items = self.pop_mark()
        for k in items[0::2]:
            _text_key(k)
        self.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})

    def load_setitem(self):
        _text_key(self.stack[-2])
        super().load_setitem()

    def load_setitems(self):
        for k in self.stack[0::2]:
            _text_key(k)
        super().load_setitems()

    def load_put(self):  # protocol 0's memo index is any decimal: numbers that hash alike are refused here too
        line = self.readline()
        if not line[:-1].isdigit() or int(line[:-1]) >= 1 << 32:
            raise pickle.UnpicklingError("refusing a memo index that is not a small number")
        self.memo[int(line[:-1])] = self.stack[-1]

    def load_build(self):  # only NumPy's dtype carries state in the files
        import numpy as np

        if not isinstance(self.stack[-2], np.dtype):
            raise pickle.UnpicklingError("refusing to set the state of an object (only plain data is accepted)")
        super().load_build()


def _counted(fn):
    def op(self):
        self.ops += 1
        if self.ops > MAX_OPS:
            raise pickle.UnpicklingError(f"more than {MAX_OPS:,} pickle opcodes (a real split pickle needs far "
                                         "fewer)")
        fn(self)
    return op


def _refused(code: bytes):
    def op(self):
        raise pickle.UnpicklingError(f"refusing pickle opcode {code!r} (only plain dicts, lists, text and numbers)")
    return op


_PlainUnpickler.dispatch = {
    code: _refused(bytes([code])) if bytes([code]) in _REFUSED else
    _counted(getattr(_PlainUnpickler, fn.__name__)) for code, fn in pickle._Unpickler.dispatch.items()}


def load_label_pickle(path: str | os.PathLike):
    """The plain value of a label pickle (module doc); DataError naming the file for anything else."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # read_bytes names the problem
    if size > MAX_BYTES:
        raise DataError(f"{size:,} bytes: larger than any label pickle ({MAX_BYTES:,} bytes at most)",
                        source=str(path))
    data = read_bytes(path)
    try:
        return _PlainUnpickler(data).load()
    except Exception as exc:  # UnpicklingError, EOFError, ValueError, struct.error ... for damaged or hostile files
        raise DataError(f"not a readable label pickle ({type(exc).__name__}: {str(exc)[:300]})",
                        source=str(path)) from None


def frame_records(value, path: Path, counted: list[int]) -> Iterator[tuple[object, object]]:
    """``(video key, its list of frame records)`` of a loaded pickle; DataError for any other shape.

    ``counted``: a one-element running count of records over every pickle of the import; more than
    :data:`MAX_RECORDS` is refused before the records are walked."""
    if not isinstance(value, dict):
        raise DataError(f"expected {{video: [frame records]}}, got {shown(value)}", source=str(path))
    for video, frames in value.items():
        if isinstance(frames, (list, tuple)):
            counted[0] += len(frames)
            if counted[0] > MAX_RECORDS:
                raise DataError(f"more than {MAX_RECORDS:,} frame records in the pickles (MultiBypass140 has about "
                                "0.6 million seconds of video)", source=str(path))
        yield video, frames
