"""``medhorizon-tasks protocol``: a paper's per-model setting as an lmms-eval command line.

* ``protocol ROW``: print the lmms-eval command for a row (e.g. ``qwen3_vl_8b``, ``sureon_gpt_5_1``),
  with the row's model args (reasoning effort, thinking switch) and generation budget (``--gen_kwargs``);
  exit 2 with the reason when the row cannot be run here;
* ``protocol ROW`` for a selector row (``aks``, ``wfs_sb``, ``vilamp``): the recipe, ``select`` then your base
  model on the task that shows the selection;
* ``protocol --list``: every row, its frame setting, adapter, task and budget;
* ``protocol --markdown [--benchmark sureon]``: the README's table of MedHorizon's (or Sureon's) rows.

The rows are data: :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings` (MedHorizon Tables 6-7) and
:mod:`medhorizon_tasks.benchmarks.sureon.model_settings` (Sureon Table 3).
"""

from __future__ import annotations

import argparse

from ..benchmarks.medhorizon import model_settings as medhorizon_rows
from ..benchmarks.medhorizon.model_settings import generation, lmms_eval_command, markdown_table, selection_recipe
from ..benchmarks.sureon import model_settings as sureon_rows
from ..core.errors import MedHorizonError

__all__ = ["add_parser", "ROWS"]

TABLES = {"medhorizon": medhorizon_rows.SETTINGS, "sureon": sureon_rows.SETTINGS}
ROWS = {s.row: s for table in TABLES.values() for s in table}


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``protocol`` to the main parser's sub-parsers."""
    p = sub.add_parser("protocol", help="the lmms-eval command that runs a model under the paper's setting",
                       description="Print the lmms-eval command line that evaluates one of the papers' models "
                                   "(MedHorizon Tables 6-7, Sureon Table 3) with its frame setting, a native-video "
                                   "adapter, its request settings and its generation budget.")
    p.add_argument("row", nargs="?", help="the model row, e.g. qwen3_vl_8b or sureon_gpt_5_1 (see --list)")
    p.add_argument("--list", action="store_true", help="list the rows")
    p.add_argument("--markdown", action="store_true", help="print the README table of a benchmark's rows")
    p.add_argument("--benchmark", choices=sorted(TABLES), default="medhorizon", help="the table for --markdown")
    p.add_argument("--output-path", default="results/", help="--output_path in the printed command")
    p.set_defaults(func=_cmd_protocol)
    return p


def _describe(s) -> str:
    if s.selection:
        return f"{s.frames} selected frames"
    if s.tasks:
        return s.input_shown
    return f"{s.frames} frames" if s.frames else (f"{s.fps:g} FPS, cap {s.cap}" if s.cap else s.input_shown)


def _cmd_protocol(args) -> int:
    if args.markdown:
        print(markdown_table(TABLES[args.benchmark]))
        return 0
    if args.list or not args.row:
        width = max(len(row) for row in ROWS)
        for s in ROWS.values():
            if s.selection:
                run = f"runnable as its selection: `select --selector {s.selection}`, then your base model on {s.task}"
            else:
                run = f"{s.adapter} on {s.task}, {generation(s)}" if s.runnable else f"not runnable here: {s.note}"
            print(f"{s.row:<{width}}  {s.paper_row} ({s.table}; {_describe(s)}): {run}")
        return 0
    s = ROWS.get(args.row)
    if s is None:
        raise MedHorizonError(f"unknown row {args.row!r}; rows: {', '.join(ROWS)}")
    command = lmms_eval_command(s, args.output_path) or selection_recipe(s, args.output_path)
    if command is None:
        raise MedHorizonError(f"{s.paper_row} cannot be run with this package: {s.note}")
    print(command)
    return 0
