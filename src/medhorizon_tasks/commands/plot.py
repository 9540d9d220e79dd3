"""``medhorizon-tasks plot``: every figure that the given results files allow (PNG, with 95% CIs)."""

from __future__ import annotations

import argparse

from ..core.errors import MedHorizonError

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``plot`` to the main parser's sub-parsers."""
    pl = sub.add_parser("plot", help="plots (PNG, with 95%% CIs) from any results file the package writes",
                        description="Draw every figure the files allow: per-task bars of MedHorizon score reports "
                        "(per_task.png), of lmms-eval results JSON (per_task_lmms_eval.png, and frame_scaling.png "
                        "from medhorizon[_synthetic]_frames<N> tasks), Sureon and SurgHiBench score reports "
                        "(per_category_sureon.png, metrics_surghi.png), the figure of each diagnostics JSON "
                        "(budgets.json, evidence.json, order.json, sampling.json -> <name>.png), and files of "
                        "named score reports such as the demo's report.json (per_task.png, and "
                        "evidence_settings.png: random / text / uniform / oracle) and report_surghi.json.")
    pl.add_argument("results", nargs="+", help="results files: lmms-eval <stamp>_results.json, `score --json` "
                    "output (MedHorizon, Sureon, SurgHiBench), diagnostics <kind>.json, the demo's report.json and "
                    "report_surghi.json; one series each (a file of named reports: one per name)")
    pl.add_argument("--out", default="medhorizon_plots", help="output folder")
    pl.add_argument("--labels", help="comma-separated series names, one per file (default: the model named in "
                    "the file, else the file name)")
    pl.set_defaults(func=_cmd_plot)
    return pl


def _cmd_plot(args) -> int:
    from .. import plots

    labels = None
    if args.labels:
        labels = [x.strip() for x in args.labels.split(",")]
        if len(labels) != len(args.results) or len(set(labels)) != len(labels) or not all(labels):
            raise MedHorizonError(f"--labels must give one distinct, non-empty name per results file "
                                  f"({len(args.results)} file(s), {len(labels)} label(s))")
    for p in plots.plot_files(args.results, args.out, labels=labels):
        print(p)
    return 0
