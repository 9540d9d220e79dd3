"""``medhorizon-tasks protocol``: the paper's per-model setting (Tables 6-7) as an lmms-eval command line.

* ``protocol ROW``: print the lmms-eval command for a row (e.g. ``qwen3_vl_8b``);
  exit 2 with the reason when the row cannot be run here;
* ``protocol --list``: every row, its frame setting, adapter and task;
* ``protocol --markdown``: the README's "Your model" table.

The rows are data: :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings`.
"""

from __future__ import annotations

import argparse

from ..benchmarks.medhorizon.model_settings import SETTINGS, lmms_eval_command, markdown_table, setting
from ..core.errors import MedHorizonError

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``protocol`` to the main parser's sub-parsers."""
    p = sub.add_parser("protocol", help="the lmms-eval command that runs a model under the paper's setting",
                       description="Print the lmms-eval command line that evaluates one of the paper's models "
                                   "(Tables 6-7) with its frame setting and a native-video adapter.")
    p.add_argument("row", nargs="?", help="the model row, e.g. qwen3_vl_8b (see --list)")
    p.add_argument("--list", action="store_true", help="list the rows")
    p.add_argument("--markdown", action="store_true", help="print the README table of every row")
    p.add_argument("--output-path", default="results/", help="--output_path in the printed command")
    p.set_defaults(func=_cmd_protocol)
    return p


def _cmd_protocol(args) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    if args.list or not args.row:
        width = max(len(s.row) for s in SETTINGS)
        for s in SETTINGS:
            frames = f"{s.frames} frames" if s.frames else (f"{s.fps:g} FPS, cap {s.cap}" if s.cap else s.input_shown)
            run = f"{s.adapter} on {s.task}" if s.runnable else f"not runnable here: {s.note}"
            print(f"{s.row:<{width}}  {s.paper_row} ({s.table}; {frames}): {run}")
        return 0
    try:
        s = setting(args.row)
    except KeyError as exc:
        raise MedHorizonError(exc.args[0]) from None
    command = lmms_eval_command(s, args.output_path)
    if command is None:
        raise MedHorizonError(f"{s.paper_row} cannot be run with this package: {s.note}")
    print(command)
    return 0
