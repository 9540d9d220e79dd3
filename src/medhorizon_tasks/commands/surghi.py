"""``medhorizon-tasks surghi import --source multibypass140|grasp --data DIR --out rows.jsonl`` (and
``surghi zeroshot``, in :mod:`.zeroshot`).

Frame rows and derived hierarchies from the upstream annotations (:mod:`.benchmarks.surghi.upstream`).
Errors are raised as MedHorizonError, which the main command prints as one message (exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.errors import MedHorizonError
from . import zeroshot
from .help import old_spellings

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``surghi`` and its sub-command ``import`` to the main parser's sub-parsers."""
    p = sub.add_parser("surghi", help="SurgHiBench: zero-shot runs of dual encoders (zeroshot) and frame rows from "
                       "the upstream annotations (import)")
    ssub = p.add_subparsers(dest="surghi_command", required=True)
    i = ssub.add_parser("import", help="frame rows (1 FPS) and derived hierarchies from MultiBypass140 / GraSP labels",
                        description="Turn a source's own annotation files into the rows that `score --benchmark "
                                    "surghi` and the lmms-eval task read, one per second of the real video, and "
                                    "derive each dataset's phase-step hierarchy from them (tree-likeness reported).")
    i.add_argument("--source", required=True, choices=("multibypass140", "grasp"))
    i.add_argument("--data", required=True, help="multibypass140: the repository's labels/ folder (per-video JSON "
                                                 "and split pickles); grasp: the annotations/ folder")
    old_spellings(i, "--data", "--labels")
    i.add_argument("--out", required=True, help="rows JSONL to write")
    i.add_argument("--hierarchy-out", help="derived hierarchies JSON (default: hierarchies.json beside OUT, where "
                                           "score, the task and zeroshot look; other datasets in it are kept)")
    i.add_argument("--split", help="grasp: test (default), train or all; multibypass140: only videos of the split "
                                   "pickles under a folder of this name (default: every labelled video)")
    i.add_argument("--frames-fps", type=float, default=30.0, help="grasp: rate of the frame numbering (default 30; "
                                                                 "a frame rate > 0)")
    i.add_argument("--keep-other", action="store_true", help="multibypass140: keep other_intervention seconds")
    i.add_argument("--video-template", help="video_path of each row, relative to the video root, with {video} and "
                                            "optionally {dataset} (default multibypass/{video}.mp4, grasp/{video}.mp4)")
    i.add_argument("--json", action="store_true", help="print the summary as JSON")
    i.set_defaults(func=_cmd_surghi_import)
    zeroshot.add_parser(ssub)
    return p


def _same_path(a: Path, b: Path) -> bool:
    """Whether writing ``a`` would overwrite ``b`` (the same name, through symlinks or a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _cmd_surghi_import(args) -> int:
    from ..benchmarks.surghi import upstream
    from ..benchmarks.surghi.frames import HIERARCHY_FILE, merged_hierarchies
    from ..core.safeio import atomic_write_files, json_content, jsonl_content
    from ..core.text import report_json

    out = Path(args.out)
    hierarchy_out = Path(args.hierarchy_out) if args.hierarchy_out else out.with_name(HIERARCHY_FILE)
    if _same_path(out, hierarchy_out):
        raise MedHorizonError(f"--hierarchy-out {hierarchy_out} is --out {out}: the hierarchies would overwrite the "
                              "rows; give two different files")
    kwargs: dict = {}
    if args.video_template is not None:
        kwargs["video_template"] = args.video_template
    if args.source == "grasp":
        kwargs.update(split=args.split or "test", frames_fps=args.frames_fps)
    else:
        kwargs.update(split=args.split, keep_other=args.keep_other)
    result = upstream.import_source(args.source, args.data, **kwargs)
    # both files or neither: a failure leaves what was there
    atomic_write_files({out: jsonl_content(out, upstream.rows_as_records(result.rows)),
                        hierarchy_out: json_content(hierarchy_out, merged_hierarchies(hierarchy_out,
                                                                                      result.hierarchies))})
    print(report_json(result.summary()) if args.json else result.message())
    print(f"wrote {out} ({len(result.rows)} rows) and {hierarchy_out} (derived hierarchies; `score`, the surghi "
          f"task and `surghi zeroshot` use them for these rows instead of the shipped ones)", file=sys.stderr)
    return 0
