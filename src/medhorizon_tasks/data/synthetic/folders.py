"""Build folders of the synthetic benchmarks: cached, multi-process safe, and replacing only their own files.

A build's ``manifest.json`` lists every file its builder wrote, and a
rebuild removes or replaces only those: files beside the build (a notes
file, the Sureon and SurgHiBench samples that default to sub-folders of the
MedHorizon build's folder) are kept, and one inside the build's own entries
(``videos/``) makes the build refuse with a
:class:`~medhorizon_tasks.core.errors.DataError` naming it, touching nothing.
:func:`build_folder` is the one builder of all synthetic folders (MedHorizon,
Sureon, SurgHiBench); :func:`manifest_files` and :func:`sample_is_valid` read
what a manifest says.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
import warnings
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ...core.errors import DataError

MANIFEST_NAME = "manifest.json"


def _read_manifest(root: Path) -> dict[str, Any] | None:
    try:
        with open(root / MANIFEST_NAME, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _folders_of(owned: Collection[str]) -> set[str]:
    """The folders (relative paths) that lead to the files in ``owned``."""
    return {str(parent) for f in owned for parent in Path(f).parents if str(parent) != "."}


def _foreign_entries(root: Path, owned: Collection[str]) -> list[str]:
    """What ``root`` holds besides the files in ``owned`` and the folders leading to them (relative paths,
    folders with a trailing "/"); a symbolic link is always foreign, since the builders write none."""
    owned = set(owned)
    folders = _folders_of(owned)
    found: list[str] = []

    def scan(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if rel in folders:
                        scan(entry.path, rel + "/")
                    else:
                        found.append(rel + "/")
                elif not (rel in owned and entry.is_file(follow_symlinks=False)):
                    found.append(rel)

    scan(str(root), "")
    return sorted(found)


def _remove_owned(root: Path, owned: Collection[str]) -> list[str]:
    """Delete the files in ``owned`` from ``root``, then the folders left empty; return what is left."""
    owned = set(owned)
    folders = _folders_of(owned)

    def clean(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            entries = list(entries)
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if rel in folders:
                    clean(entry.path, rel + "/")
                    try:
                        os.rmdir(entry.path)
                    except OSError:
                        pass  # it still holds something that is not ours
            elif rel in owned and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)

    clean(str(root), "")
    try:
        os.rmdir(root)
    except OSError:
        return _foreign_entries(root, ())
    return []


def _top(rel: str) -> str:
    return rel.split("/", 1)[0]


def _listed(entries: list[str]) -> str:
    return ", ".join(entries[:10]) + (f" and {len(entries) - 10} more" if len(entries) > 10 else "")


def manifest_files(root: Path, generator: str, legacy: Callable[[dict], list[str] | None]) -> set[str] | None:
    """The files (relative POSIX paths) a builder wrote in ``root``, from its manifest: its ``files`` list when
    the manifest names ``generator`` and has one, else ``legacy(manifest)`` (a manifest from before the list),
    else None."""
    manifest = _read_manifest(root)
    if manifest is None:
        return None
    files = manifest.get("files") if manifest.get("generator") == generator else None
    if files is None:
        files = legacy(manifest)
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return {*files, MANIFEST_NAME}


def sample_is_valid(root: Path, seed: int, version: int, owned: Callable[[Path], set[str] | None], *,
                    version_key: str = "version") -> bool:
    """A complete build of this ``version`` (the manifest's ``version_key``) and ``seed``: its manifest,
    and every file it lists."""
    manifest = _read_manifest(root)
    files = owned(root)
    return (manifest is not None and files is not None and manifest.get(version_key) == version
            and manifest.get("seed") == seed and all((root / f).is_file() for f in files))


def _nested_build(folder: Path, name: str) -> bool:
    """Whether ``folder/name`` is another synthetic build of this package (the Sureon and SurgHiBench
    samples live inside the MedHorizon build folder by default, and may be built first) or its lock file:
    it is beside the build, not in its way."""
    path = folder / name
    if name.endswith(".lock") and not path.is_dir():
        return (folder / name[: -len(".lock")]).is_dir()
    if not path.is_dir() or path.is_symlink():
        return False
    manifest = _read_manifest(path)
    return manifest is not None and str(manifest.get("generator", "")).startswith("medhorizon_tasks.data.")


def _replaceable(folder: Path, shown: Path, owned: Callable[[Path], set[str] | None], what: str,
                 writes: Collection[str] = ()) -> set[str]:
    """The files of the build in ``folder`` that a rebuild may replace (none when it is absent or empty).

    DataError when ``folder`` is not a build (and not empty), or when something its builder did not write
    sits where the build lives: in one of its top-level entries, or at a top-level name that the build
    (``writes``, relative paths) is about to take. Entries beside the build are no obstacle.
    """
    if not os.path.lexists(folder):
        return set()
    if not folder.is_dir():
        raise DataError(f"{shown} exists and is not a folder; refusing to replace it")
    mine = owned(folder)
    if mine is None:
        with os.scandir(folder) as it:
            entries = sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in it
                             if not _nested_build(folder, e.name))
        if entries:
            raise DataError(f"{shown} exists and is not a {what} (it holds {_listed(entries)}); refusing to replace it")
        return set()
    tops = {_top(f) for f in (*mine, *writes)}
    in_the_way = [f for f in _foreign_entries(folder, mine) if _top(f.rstrip("/")) in tops]
    if in_the_way:
        raise DataError(
            f"{shown} holds a {what}, and inside its entries what its builder did not write: {_listed(in_the_way)}; "
            f"refusing to replace it, since a rebuild only removes or replaces the files its manifest lists. Move "
            f"those elsewhere (anything beside the build's own entries, {', '.join(sorted(tops))}, is kept)")
    return mine


def _swap(root: Path, new: Path, old: Path, old_files: Collection[str], new_files: Collection[str]) -> None:
    """Move the old build's top-level entries from ``root`` to ``old`` and the new build's from ``new`` to
    ``root``, leaving every other entry of ``root`` where it is."""
    # the manifest leaves first and arrives last: in between the folder is no valid build, so a reader
    # waits on the lock instead of mixing the two builds
    leaving = sorted({_top(f) for f in old_files}, key=lambda n: n != MANIFEST_NAME)
    arriving = sorted({_top(f) for f in new_files}, key=lambda n: n == MANIFEST_NAME)
    old.mkdir()
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        for name in leaving:
            if os.path.lexists(root / name):
                os.replace(root / name, old / name)
                moved_out.append(name)
        for name in arriving:
            os.replace(new / name, root / name)
            moved_in.append(name)
    except BaseException:
        for src, dst, names in ((root, new, moved_in), (old, root, moved_out)):
            for name in reversed(names):
                try:
                    os.replace(src / name, dst / name)
                except OSError:
                    pass  # the first error is the one to report
        raise


def build_folder(
    root: Path,
    *,
    write: Callable[[Path], object],
    valid: Callable[[Path], bool],
    owned: Callable[[Path], set[str] | None],
    what: str,
    force: bool = False,
) -> None:
    """Make ``root`` hold a valid build, reusing one unless ``force``; the one builder of all synthetic folders.

    ``write(tmp)`` creates a complete build in a new folder ``tmp``, with a
    ``manifest.json`` (written last) that lists every file it wrote;
    ``valid(folder)`` says whether a folder holds a complete build of the
    wanted kind; ``owned(folder)`` gives the files (relative POSIX paths) its
    manifest lists, or ``None`` when it has no manifest of this builder.

    Only those files are ever removed or replaced. Anything else in ``root``
    beside the build (a notes file, another sample's folder) stays where it
    is. Something the builder did not write inside the build's own entries
    (say ``videos/mine.mp4``), or a ``root`` that is neither a build nor empty,
    raises :class:`DataError` naming it, and nothing is touched. The check is
    made before building and again before the swap.

    The build is made in a temporary sibling folder and moved into place by
    renames; a file lock (``<root>.lock``) makes concurrent processes build
    once. ``root`` may be a symbolic link to a folder: the build goes there.
    """
    from filelock import FileLock

    if not force and valid(root):
        return
    real = Path(os.path.realpath(root))  # renames must stay on the folder's own file system
    real.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(real) + ".lock"):
        if not force and valid(root):  # another process built it meanwhile
            return
        _replaceable(real, root, owned, what)  # before building: a refusal should not cost a build
        tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp = real.parent / f".{real.name}.tmp-{tag}"
        old = real.parent / f".{real.name}.old-{tag}"
        old_files: set[str] = set()
        try:
            write(tmp)
            if not force and valid(root):
                return  # a concurrent builder (not honouring the lock) won: keep theirs
            if not os.path.lexists(real):
                try:
                    os.replace(tmp, real)
                except OSError:
                    if valid(root):  # lost a race to a builder that renamed in between: keep a valid winner
                        return
                    raise
                return
            new_files = owned(tmp)
            if new_files is None:
                raise RuntimeError(f"{tmp}: the build wrote no manifest listing its files")
            # again: files may have been added while we built
            old_files = _replaceable(real, root, owned, what, writes=new_files)
            _swap(real, tmp, old, old_files, new_files)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)  # holds only what write() made
            if os.path.lexists(old):
                left = _remove_owned(old, old_files)
                if left:
                    warnings.warn(f"{old} kept: it holds what the builder did not write ({_listed(left)})",
                                  stacklevel=3)
