"""The paper's diagnostic figures, and a chart for every results file the package writes (matplotlib, Agg).

Accuracies are fractions 0..1 (shown as percent); ``None`` (and NaN) values
are left out. An accuracy may carry its 95% confidence interval: give an
:class:`Acc`, or a summary mapping such as the score reports hold
(``{"accuracy", "ci95"}``, ``{"accuracy", "ci95_bootstrap"}``, or
``{"accuracy", "correct", "n"}``, from which a Wilson interval is computed).
Every proportion that has an interval is drawn with it: whiskers on bars,
error bars on lines, and the legend says which interval it is.

Each figure has a ``build_*`` function returning the
:class:`matplotlib.figure.Figure` (laid out, ready to inspect) and a
``plot_*`` function that builds it, writes one PNG (parent folders created)
and returns its :class:`~pathlib.Path`. Figures are built with
``matplotlib.figure.Figure`` and rendered by the Agg canvas, never through
``pyplot``: no global backend is switched and no figure is left registered.

Accuracy dicts of MedHorizon use one vocabulary: ``"overall"``, the family
names ``"fine_grained"`` and ``"semantic_reasoning"`` (also accepted:
"Fine-grained", "Semantic reasoning", "Overall"), and the task codes ("PR",
"SD", ... in taxonomy order).

- :func:`plot_frame_scaling`: accuracy vs frames (RQ1, Figure 6).
- :func:`plot_evidence_settings`: Random / Text / Uniform / GT-images (RQ2, Figure 7).
- :func:`plot_per_task`: one bar per run for Overall, the two families and each task code.
- :func:`plot_order`: original / reverse / block shuffle / local shuffle (RQ3, Figure 8).
- :func:`plot_sampling`: uniform / frame-change / hybrid at 32 and 64 frames (RQ4, Figure 10).
- :func:`plot_bars`: grouped bars for any keys (lmms-eval task names, Sureon categories).
- :func:`plot_surghi`: SurgHiBench metrics, one panel per dataset and Overall.
- :func:`plot_diagnostic`: the figure of a ``diagnose`` / ``sweep`` result (its rows, or its JSON).
- :func:`plot_files`: what ``medhorizon-tasks plot`` draws from results files (:func:`load_results`;
  :func:`build_files` returns those figures unsaved).
"""

# The public names of the former plots.py, all importable from here as before; the noqa ones were never in
# __all__ (so ``import *`` still leaves them out).
from .accuracies import (
    CHANCE,
    CI_METHODS,
    DIAGNOSTIC_KINDS,  # noqa: F401
    SUMMARY_KEYS,  # noqa: F401
    SURGHI_METRICS,  # noqa: F401
    Acc,
)
from .figures import (
    EVIDENCE_SETTINGS,  # noqa: F401
    ORDER_KINDS,  # noqa: F401
    STRATEGIES,  # noqa: F401
    build_bars,
    build_diagnostic,
    build_evidence_settings,
    build_frame_scaling,
    build_order,
    build_per_task,
    build_sampling,
    build_surghi,
    plot_bars,
    plot_diagnostic,
    plot_evidence_settings,
    plot_frame_scaling,
    plot_order,
    plot_per_task,
    plot_sampling,
    plot_surghi,
)
from .results_files import (
    ACCEPTED_SHAPES,
    SUREON_SUMMARY,  # noqa: F401
    ResultsFile,
    budget_curve,
    build_files,
    frame_curves,
    load_accuracy_file,
    load_results,
    plot_files,
)

__all__ = ["Acc", "CHANCE", "CI_METHODS", "ResultsFile",
           "build_frame_scaling", "build_evidence_settings", "build_per_task", "build_order", "build_sampling",
           "build_bars", "build_surghi", "build_diagnostic",
           "plot_frame_scaling", "plot_evidence_settings", "plot_per_task", "plot_order", "plot_sampling",
           "plot_bars", "plot_surghi", "plot_diagnostic", "plot_files", "build_files",
           "load_results", "load_accuracy_file", "budget_curve", "frame_curves", "ACCEPTED_SHAPES"]
