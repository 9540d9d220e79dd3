"""``videos check`` / ``videos link`` on hostile or careless roots, downloads and checksum lists (issue 21, kind
4): symlink loops, names that are not UTF-8, partial and conflicting ``--checksums`` lists, a damaged copy in
the root beside an intact upstream, two links writing one manifest, and a download's symlink that leads out.
Every case goes through the real command, as a user meets it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import upstream_fakes as F
from medhorizon_tasks.commands.main import main as run
from medhorizon_tasks.core.safeio import read_json
from medhorizon_tasks.data import reconstruct as R
from medhorizon_tasks.data.reconstruct import run as reconstruct_run

VP = "multibypass/BBP01.mp4"


def _data(tmp: Path, *names: str) -> Path:
    """A release of MultiBypass videos ``multibypass/<name>.mp4`` (10 frames at 5 fps each)."""
    names = names or ("BBP01",)
    return F.write_release(tmp / f"r_{'_'.join(names)}.jsonl",
                           [F.record(n, "MultiBypass", f"multibypass/{n}.mp4", 10, 5, [k]) for k, n in
                            enumerate(names, 1)])


def _videos(cmd: str, root: Path, data: Path, tmp: Path, *extra: str) -> tuple[int, dict]:
    report = tmp / "report.json"
    report.unlink(missing_ok=True)
    status = run(["videos", cmd, "--video-root", str(root), "--data", str(data), "--quiet", "--check-cache",
                  str(tmp / "checks.json"), "--out", str(report), *extra])
    return status, (read_json(report) if report.exists() else {})


def _item(report: dict, vp: str = VP) -> dict:
    return next(v for v in report["items"] if v["video_path"] == vp)


# ------------------------------------------------------------------ symlink loops

def test_a_symlink_loop_in_the_root_is_reported_not_a_traceback(tmp_path, capsys):
    data = _data(tmp_path)
    root = tmp_path / "root"
    (root / "multibypass").mkdir(parents=True)
    os.symlink("BBP01.mp4", root / VP)  # points at itself
    status, rep = _videos("check", root, data, tmp_path)
    assert status == 1 and rep["usable"] == 0
    assert "symlink loop" in _item(rep)["reason"]
    assert run(["check", "--data", str(data), "--video-root", str(root), "--quiet"]) == 1
    out = capsys.readouterr()
    assert "symlink loop" in out.out + out.err and "Traceback" not in out.err
    loop = tmp_path / "loop"
    os.symlink("loop", loop)  # the root itself
    for cmd in ("check", "link"):
        assert _videos(cmd, loop, data, tmp_path)[0] == 2
        assert "is not a folder (a symlink that leads nowhere, or loops)" in capsys.readouterr().err


def test_a_symlink_loop_in_a_download_is_named_as_the_reason(tmp_path):
    data = _data(tmp_path)
    up = tmp_path / "mb"
    up.mkdir()
    os.symlink("BBP01.mp4", up / "BBP01.mp4")
    os.symlink("sub", up / "sub")  # a folder loop is not walked forever either
    status, rep = _videos("link", tmp_path / "root", data, tmp_path, "--from", f"MultiBypass={up}")
    item = _item(rep)
    assert status == 1 and item["state"] == "missing"
    assert f"{up / 'BBP01.mp4'}: a symlink loop" in item["reason"]


# ------------------------------------------------------------------ the manifest

def test_a_download_folder_that_is_not_utf8_leaves_a_manifest_the_package_reads(tmp_path, capsys):
    odd = Path(os.fsdecode(bytes(tmp_path / "dl") + b"\xff"))
    F.encode_video(odd / "BBP01.mp4", 10)
    F.encode_video(tmp_path / "good" / "BBP02.mp4", 10)
    root = tmp_path / "root"
    status, rep = _videos("link", root, _data(tmp_path), tmp_path, "--from", f"MultiBypass={odd}")
    assert status == 0 and rep["ok"]
    manifest = read_json(root / R.MANIFEST)  # the package's own reader: no lone surrogate in it
    assert manifest[VP]["from"] == str(tmp_path / "dl") + "\\xff/BBP01.mp4"
    assert _item(rep)["upstream"] == manifest[VP]["from"]
    # the next link (another video) keeps the record of the first
    status, _ = _videos("link", root, _data(tmp_path, "BBP02"), tmp_path, "--from", f"MultiBypass={tmp_path / 'good'}")
    assert status == 0
    assert set(read_json(root / R.MANIFEST)) == {VP, "multibypass/BBP02.mp4"}
    capsys.readouterr()


def test_an_unreadable_manifest_is_never_replaced(tmp_path, capsys):
    F.encode_video(tmp_path / "mb" / "BBP01.mp4", 10)
    root = tmp_path / "root"
    root.mkdir()
    (root / R.MANIFEST).write_text('{"multibypass/OLD.mp4": {"from": "x"')  # cut short
    before = (root / R.MANIFEST).read_bytes()
    status, _ = _videos("link", root, _data(tmp_path), tmp_path, "--from", f"MultiBypass={tmp_path / 'mb'}")
    err = capsys.readouterr().err
    assert status == 2 and R.MANIFEST in err and "move it aside" in err
    assert (root / R.MANIFEST).read_bytes() == before and not (root / VP).exists()


def test_two_links_at_once_keep_every_manifest_entry(tmp_path, monkeypatch):
    """Link A places its video while link B runs from start to end (B's whole run inside A's): the manifest
    keeps both records (each entry is added under the lock, reading the manifest again)."""
    up = tmp_path / "mb"
    for n in ("BBP01", "BBP02", "BBP03"):
        F.encode_video(up / f"{n}.mp4", 10)
    root = tmp_path / "root"
    real = reconstruct_run.materialize
    nested: list = []

    def materialize_while_another_link_runs(*args, **kwargs):
        if not nested:
            nested.append("running")
            nested[0] = _videos("link", root, _data(tmp_path, "BBP03"), tmp_path / "b", "--from", f"MultiBypass={up}")
        return real(*args, **kwargs)

    (tmp_path / "b").mkdir()
    monkeypatch.setattr(reconstruct_run, "materialize", materialize_while_another_link_runs)
    status, rep = _videos("link", root, _data(tmp_path, "BBP01", "BBP02"), tmp_path, "--from", f"MultiBypass={up}")
    assert status == 0 and nested[0][0] == 0
    assert set(read_json(root / R.MANIFEST)) == {"multibypass/BBP01.mp4", "multibypass/BBP02.mp4",
                                                 "multibypass/BBP03.mp4"}


# ------------------------------------------------------------------ --checksums

@pytest.fixture
def placed(tmp_path):
    """Two videos linked under ``tmp/videos/root`` and their true SHA-256."""
    up = tmp_path / "mb"
    for n, frames in (("BBP01", 10), ("BBP02", 12)):
        F.encode_video(up / f"{n}.mp4", frames)
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "MultiBypass", VP, 10, 5, [1]),
                                                  F.record("b", "MultiBypass", "multibypass/BBP02.mp4", 12, 5, [2])])
    root = tmp_path / "videos" / "root"
    assert _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}")[0] == 0
    sums = {vp: hashlib.sha256((root / vp).read_bytes()).hexdigest() for vp in (VP, "multibypass/BBP02.mp4")}
    return data, root, sums


def _check(tmp: Path, data: Path, root: Path, listing: str, name: str = "SHA256SUMS", where: Path | None = None):
    sums = (where or tmp) / name
    sums.parent.mkdir(parents=True, exist_ok=True)
    sums.write_text(listing, encoding="utf-8")
    return _videos("check", root, data, tmp, "--checksums", str(sums))


def test_checksums_listed_one_folder_up_or_absolute_are_matched_and_counted(placed, tmp_path, capsys):
    data, root, sums = placed
    made_one_up = "".join(f"{h}  root/{vp}\n" for vp, h in sums.items())  # `sha256sum root/...` in videos/
    for listing, where in ((made_one_up, root.parent),              # beside where it was made
                           (made_one_up, tmp_path / "elsewhere"),   # moved: matched by its last components
                           ("".join(f"{h} *{root / vp}\n" for vp, h in sums.items()), tmp_path),  # absolute, binary
                           ("".join(f"SHA256 ({vp}) = {h}\n" for vp, h in sums.items()), tmp_path)):  # --tag
        status, rep = _check(tmp_path, data, root, listing, where=where)
        assert status == 0, rep
        assert rep["checksums"]["verified"] == 2 and rep["checksums"]["entries"] == 2
        assert {v["checksum"] for v in rep["items"]} == {"match"}
    capsys.readouterr()
    run(["videos", "check", "--video-root", str(root), "--data", str(data), "--quiet", "--check-cache",
         str(tmp_path / "checks.json"), "--checksums", str(tmp_path / "SHA256SUMS")])
    assert "2 of 2 videos verified" in capsys.readouterr().out


def test_a_checksum_list_that_verifies_nothing_is_an_error(placed, tmp_path, capsys):
    data, root, sums = placed
    for listing, why in (("", "no checksum in the list"),
                         ("# only a comment\n\n", "no checksum in the list"),
                         (f"{sums[VP]}  other/BBP09.mp4\n", "names a video of the data")):
        status, rep = _check(tmp_path, data, root, listing)
        err = capsys.readouterr().err
        assert status == 2 and why in err and not rep, (listing, err)


def test_a_wrong_hash_makes_the_video_unusable_and_is_counted(placed, tmp_path, capsys):
    data, root, sums = placed
    status, rep = _check(tmp_path, data, root, f"{'0' * 64}  {VP}\n{sums['multibypass/BBP02.mp4']}  "
                                               "multibypass/BBP02.mp4\n")
    assert status == 1 and not rep["ok"]
    assert _item(rep)["state"] == "unusable" and _item(rep)["checksum"] == "differs"
    assert rep["checksums"]["verified"] == 1 and rep["checksums"]["differ"] == [VP]
    assert "1 of 2 videos verified; 1 differ" in capsys.readouterr().out


def test_two_lines_giving_one_file_different_hashes_are_an_error(placed, tmp_path, capsys):
    data, root, sums = placed
    for listing, why in ((f"{sums[VP]}  {VP}\n{'0' * 64}  ./{VP}\n", "line 2: 'multibypass/BBP01.mp4' has another "
                          "SHA-256 than on line 1"),                                  # one path, spelled twice
                         (f"{sums[VP]}  {VP}\n{'0' * 64}  {root / VP}\n",
                          "lines 1 and 2")):                                           # relative and absolute
        status, rep = _check(tmp_path, data, root, listing)
        err = capsys.readouterr().err
        assert status == 2 and why in err and not rep, err


def test_a_checksum_line_is_not_split_at_a_unicode_line_separator(tmp_path, capsys):
    vp = "multibypass/BBP01\u2028take2.mp4"
    F.encode_video(tmp_path / "root" / vp, 10)
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "MultiBypass", vp, 10, 5, [1])])
    digest = hashlib.sha256((tmp_path / "root" / vp).read_bytes()).hexdigest()
    assert [(e.path, e.sha256) for e in R.read_checksums(_write(tmp_path / "S", f"{digest}  {vp}\n")).entries] == [
        (vp, digest)]
    status, rep = _check(tmp_path, data, tmp_path / "root", f"{digest}  {vp}\n")
    assert status == 0 and rep["checksums"]["verified"] == 1


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ a damaged copy in the root

def test_a_damaged_copy_in_the_root_is_blamed_on_it_and_force_replaces_it(tmp_path, capsys):
    up = tmp_path / "mb"
    F.encode_video(up / "BBP01.mp4", 10)
    data, root = _data(tmp_path), tmp_path / "root"
    assert _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}", "--copy")[0] == 0
    target = root / VP
    size = target.stat().st_size
    target.write_bytes(b"\0" * size)  # damaged in place: same size, same name
    status, rep = _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}", "--copy")
    reason = _item(rep)["reason"]
    assert status == 1 and "holds other bytes than the file in the root" in reason and "--force" in reason
    assert "affected itself" not in reason and target.read_bytes() == b"\0" * size
    status, rep = _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}", "--copy", "--force")
    assert status == 0 and _item(rep)["action"] == "copy"
    assert target.read_bytes() == (up / "BBP01.mp4").read_bytes()


def test_a_damaged_upstream_is_blamed_on_the_upstream(tmp_path):
    up = tmp_path / "mb"
    up.mkdir()
    (up / "BBP01.mp4").write_bytes(b"not a video" * 50)
    data, root = _data(tmp_path), tmp_path / "root"
    _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}")  # hard-linked, then found unusable
    status, rep = _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}", "--force")
    assert status == 1 and "holds the same bytes: it is affected itself" in _item(rep)["reason"]


def test_a_damaged_assembled_video_is_made_again_with_force(tmp_path):
    frames = F.write_frames(tmp_path / "rc" / "002-010_frames", {i: f"002-010_{i}.jpg" for i in range(F.N)}, "JPEG")
    vp = "real_colon/002-010.mp4"
    data = F.write_release(tmp_path / "r.jsonl", [F.record("a", "REAL-Colon", vp, F.N, F.FPS, [1])])
    root, frm = tmp_path / "root", ["--from", f"REAL-Colon={frames.parent}"]
    assert _videos("link", root, data, tmp_path, *frm)[0] == 0
    good = (root / vp).read_bytes()
    (root / vp).write_bytes(b"\0" * len(good))
    status, rep = _videos("link", root, data, tmp_path, *frm)
    assert status == 1 and "--force to make the file again" in _item(rep, vp)["reason"]
    assert "unchanged since" not in _item(rep, vp)["reason"]
    status, rep = _videos("link", root, data, tmp_path, *frm, "--force")
    assert status == 0 and (root / vp).read_bytes() == good


# ------------------------------------------------------------------ a symlink out of the download

def test_a_downloads_symlink_to_a_file_outside_is_never_linked_into_the_root(tmp_path):
    outside = F.encode_video(tmp_path / "private" / "anything.mp4", 10)
    up = tmp_path / "mb"
    up.mkdir()
    os.symlink(outside, up / "BBP01.mp4")
    data, root = _data(tmp_path), tmp_path / "root"
    for mode in ([], ["--copy"]):
        status, rep = _videos("link", root, data, tmp_path, "--from", f"MultiBypass={up}", *mode)
        item = _item(rep)
        assert status == 1 and item["state"] == "missing", item
        assert "outside the download folder" in item["reason"]
    assert not (root / VP).exists() and outside.stat().st_nlink == 1
