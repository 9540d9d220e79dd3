"""A video and its repaired twin: the same size, the same first and last MiB, another middle (issue 21).

A re-download that repairs a damaged middle leaves a file of the same size whose ends are identical; copied
with ``cp -p`` / ``rsync -a`` it even keeps the old mtime. Any identity built from size, ends or mtime takes
it for the old file. Such a pair is made here from the synthetic benchmark's ``syn-pitvqa-00`` (5 questions):
uncompressed 4:2:0 pictures (``yuv4`` in a QuickTime file, so every frame has the same number of bytes and
the container is written deterministically), where the twin shows the visual code of its first question only
-- the evidence windows of the four others, all far from both ends, are background. The needle probe
therefore answers 5 of 5 with the old file's oracle frames and 1 of 5 with the twin's.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from medhorizon_tasks.data.synthetic.medhorizon import render_frames

CHANGED_KEY, OTHER_KEY = "syn-pitvqa-00", "syn-tmvp-01"
END = 1 << 20  # what an identity of "the first and last MiB" hashes


@dataclass(frozen=True)
class Twins:
    data: Path                 # the release: the changed video and one other, unchanged
    video_path: str            # the changed video, relative to a root
    old: Path                  # its bytes before,
    new: Path                  # and after the repair
    kept_uid: str              # the one question whose evidence the twin still shows
    changed_uids: tuple[str, ...]  # the four whose evidence it no longer shows
    other_uids: tuple[str, ...]    # the questions of the unchanged video

    def root(self, folder: Path, synthetic, *, version: str = "old") -> Path:
        """A video root in ``folder`` holding the ``version`` of the changed video and the other video."""
        for rec in (json.loads(x) for x in self.data.read_text().splitlines()):
            dst = folder / rec["video_path"]
            dst.parent.mkdir(parents=True, exist_ok=True)
            src = (self.old if version == "old" else self.new) if rec["video_path"] == self.video_path else \
                synthetic.video_root / rec["video_path"]
            shutil.copyfile(src, dst)
        return folder

    def repair(self, root: Path) -> None:
        """Put the twin in place of the old file as ``cp -p`` would: same path, same size, mtime kept."""
        target = root / self.video_path
        st = target.stat()
        shutil.copyfile(self.new, target)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert (target.stat().st_size, target.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _write(path: Path, frames, fps: float) -> None:
    with av.open(str(path), "w", format="mov") as out:
        stream = out.add_stream("yuv4", rate=Fraction(fps).limit_denominator(1001))
        for i, rgb in enumerate(frames):
            if i == 0:
                stream.width, stream.height, stream.pix_fmt = rgb.shape[1], rgb.shape[0], "yuv420p"
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1) / Fraction(fps).limit_denominator(1001)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def make_twins(synthetic, folder: Path) -> Twins:
    records = {r["key"]: r for r in (json.loads(x) for x in synthetic.data_path.read_text().splitlines())}
    changed, other = copy.deepcopy(records[CHANGED_KEY]), records[OTHER_KEY]
    changed["video_path"] = changed["video_path"].rsplit(".", 1)[0] + ".mov"
    fps = changed["num_frames"] / changed["duration_seconds"]
    folder.mkdir(parents=True, exist_ok=True)
    old, new = folder / "old.mov", folder / "new.mov"
    _write(old, render_frames(changed), fps)
    _write(new, render_frames({**changed, "qa": changed["qa"][:1]}), fps)
    a, b = old.read_bytes(), new.read_bytes()
    assert len(a) == len(b) > 4 * END and a[:END] == b[:END] and a[-END:] == b[-END:] and a != b
    data = folder / "release.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in (changed, other)))
    uids = [str(q["uid"]) for q in changed["qa"]]
    return Twins(data, changed["video_path"], old, new, uids[0], tuple(uids[1:]),
                 tuple(str(q["uid"]) for q in other["qa"]))
