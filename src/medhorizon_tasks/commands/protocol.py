"""``medhorizon-tasks protocol``: a paper's per-model setting as a ``medhorizon-tasks run`` command line.

* ``protocol NAME``: print the ``medhorizon-tasks run`` command (lmms-eval's arguments) for a row, named as
  ``score --paper-row`` names it: the registry row (``qwen3_vl_8b``, ``sureon_gpt_5_1``), the model as the
  paper prints it (``Qwen3-VL-8B``) or its checkpoint (``Qwen/Qwen3-VL-8B-Instruct``), with the row's model
  args (reasoning effort, thinking switch) and generation budget (``--gen_kwargs``); exit 2 with the reason
  when the row cannot be run here;
* ``protocol NAME`` for a selector row (``aks``, ``wfs_sb``, ``vilamp``): the recipe, ``select`` then your base
  model on the task that shows the selection;
* ``protocol ROW --serve vllm [--tensor-parallel T --data-parallel D --nodes N --head HOST]``: the ``vllm serve``
  command(s) for the row's checkpoint and the ``medhorizon-tasks run`` that sends it the planned frames as video
  (:mod:`medhorizon_tasks.runs.vllm_serve`);
* ``protocol --list``: every row of the three papers' tables, its frame setting, adapter, task and budget (and,
  where the benchmark fixes the prompt's layout, how the frames reach the model: Sureon's rows), or why it cannot
  run (no public weights);
* ``protocol --markdown [--benchmark sureon|surghi]``: the docs' table of MedHorizon's (Sureon's, SurgHiBench's)
  rows.

The rows are data: :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings` (MedHorizon Tables 6-7),
:mod:`medhorizon_tasks.benchmarks.sureon.model_settings` (Sureon Table 3) and
:mod:`medhorizon_tasks.benchmarks.surghi.model_settings` (SurgHiBench Tables 2-4).
"""

from __future__ import annotations

import argparse
import re

from ..benchmarks.medhorizon import model_settings as medhorizon_rows
from ..benchmarks.medhorizon.model_settings import generation, markdown_table, run_command
from ..benchmarks.sureon import model_settings as sureon_rows
from ..benchmarks.surghi import model_settings as surghi_rows
from ..core.errors import MedHorizonError
from ..runs.vllm_serve import ServePlan, serve_commands
from .help import old_spellings

__all__ = ["add_parser", "ROWS"]

TABLES = {"medhorizon": medhorizon_rows.SETTINGS, "sureon": sureon_rows.SETTINGS, "surghi": surghi_rows.SETTINGS}
ROWS = {s.row: s for table in TABLES.values() for s in table}


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``protocol`` to the main parser's sub-parsers."""
    p = sub.add_parser("protocol", help="the lmms-eval command that runs a model under the paper's setting",
                       description="Print the `medhorizon-tasks run` command line (lmms-eval's arguments) that "
                                   "evaluates one of the papers' models (MedHorizon Tables 6-7, Sureon Table 3; SurgHiBench's "
                                   "encoders: `surghi zeroshot`) with "
                                   "its frame setting, a native-video adapter, its request settings and its "
                                   "generation budget.")
    p.add_argument("row", nargs="?", metavar="NAME",
                   help="the model: a row (qwen3_vl_8b, sureon_gpt_5_1; see --list), the model as the paper prints "
                        "it (Qwen3-VL-8B) or its checkpoint (Qwen/Qwen3-VL-8B-Instruct), as `score --paper-row` "
                        "takes it; a name of both papers is looked up in --benchmark's table first")
    p.add_argument("--list", action="store_true", help="list the rows")
    p.add_argument("--markdown", action="store_true", help="print the README table of a benchmark's rows")
    p.add_argument("--benchmark", choices=sorted(TABLES), default="medhorizon",
                   help="the table for --markdown, and the one a model name is looked up in first")
    p.add_argument("--out", default="results/", help="the run's folder (lmms-eval's --output_path) in the printed "
                   "command")
    old_spellings(p, "--out", "--output-path")
    p.add_argument("--serve", choices=("vllm",), help="print the server command(s) for the row's checkpoint and the "
                                                      "run that sends it the planned frames as one video")
    p.add_argument("--tensor-parallel", type=int, default=1, help="--serve: GPUs per model replica (default 1)")
    p.add_argument("--data-parallel", type=int, default=1, help="--serve: model replicas in all (default 1)")
    p.add_argument("--nodes", type=int, default=1, help="--serve: machines the replicas are spread over (default 1)")
    p.add_argument("--head", default="HEAD_NODE_IP", help="--serve: address of the node that serves the API")
    p.add_argument("--port", type=int, default=8000, help="--serve: the API port (default 8000)")
    p.add_argument("--num-concurrent", type=int, help="--serve: requests in flight (default 8 per replica)")
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
            if s.encoder:
                run = f"surghi zeroshot --encoder {s.encoder}"
            elif s.selection:
                run = f"runnable as its selection: `select --selector {s.selection}`, then your base model on {s.task}"
            else:
                run = f"{s.adapter} on {s.task}, {generation(s)}" if s.runnable else f"not runnable here: {s.note}"
            if s.runnable and s.frames_as:  # the departures column: how the frames reach the model
                run = f"{run}; frames: {s.frames_as}"
            print(f"{s.row:<{width}}  {s.paper_row} ({s.table}; {_describe(s)}): {run}")
        return 0
    s = find_setting(args.row, args.benchmark)
    if args.serve:
        plan = ServePlan(args.tensor_parallel, args.data_parallel, args.nodes, args.head, args.port,
                         args.num_concurrent)
        for where, command in serve_commands(s, plan, args.out):
            print(f"# {where}\n{command}")
        return 0
    command = run_command(s, args.out)
    if command is None:
        raise MedHorizonError(f"{s.paper_row} cannot be run with this package: {s.note}")
    print(RUN + command[len(LMMS_EVAL):] if command.startswith(LMMS_EVAL + " ") else command)
    return 0


RUN, LMMS_EVAL = "medhorizon-tasks run", "lmms-eval"


def _norm(name: str) -> str:
    return re.sub(r"[\W_]", "", name.casefold())


def _names(s) -> set[str]:
    """A row's names: its key, the model as the paper prints it, and the checkpoint its model args load."""
    names = {_norm(s.row), _norm(s.paper_row)}
    for part in (s.model_args or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() in ("pretrained", "model", "model_version") and value:
            names |= {_norm(value), _norm(value.rstrip("/").rsplit("/", 1)[-1])}
    return names - {""}


def find_setting(name: str, benchmark: str = "medhorizon"):
    """The row ``name`` names (the names ``score --paper-row`` takes), looked up in ``benchmark``'s table first."""
    from ..benchmarks.published import find_row

    if name in ROWS:
        return ROWS[name]
    wanted = {_norm(name), _norm(name.rstrip("/").rsplit("/", 1)[-1])} - {""}
    for bench in (benchmark, *(b for b in TABLES if b != benchmark)):
        printed = find_row(bench, name)
        printed_names = {_norm(n) for n in (printed.model, *printed.aliases)} if printed else set()
        found = [s for s in TABLES[bench] if wanted & _names(s) or _norm(s.paper_row) in printed_names]
        if len(found) == 1:
            return found[0]
        if found:
            raise MedHorizonError(f"{name!r} names {len(found)} rows of {bench}'s table: "
                                  f"{', '.join(s.row for s in found)}; give one of them")
    raise MedHorizonError(f"unknown row {name!r}; rows: {', '.join(ROWS)} (or a model as the papers print it)")
