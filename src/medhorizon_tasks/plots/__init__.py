"""The figures and results-file readers of the former ``plots.py``, moved as they are into this package
(``results_files``) so that its history follows; the next commit splits them into modules."""

from .results_files import (
    ACCEPTED_SHAPES,
    CHANCE,
    CI_METHODS,
    DIAGNOSTIC_KINDS,  # noqa: F401
    EVIDENCE_SETTINGS,  # noqa: F401
    ORDER_KINDS,  # noqa: F401
    STRATEGIES,  # noqa: F401
    SUMMARY_KEYS,  # noqa: F401
    SUREON_SUMMARY,  # noqa: F401
    SURGHI_METRICS,  # noqa: F401
    Acc,
    ResultsFile,
    budget_curve,
    build_bars,
    build_diagnostic,
    build_evidence_settings,
    build_files,
    build_frame_scaling,
    build_order,
    build_per_task,
    build_sampling,
    build_surghi,
    frame_curves,
    load_accuracy_file,
    load_results,
    plot_bars,
    plot_diagnostic,
    plot_evidence_settings,
    plot_files,
    plot_frame_scaling,
    plot_order,
    plot_per_task,
    plot_sampling,
    plot_surghi,
)

__all__ = ["Acc", "CHANCE", "CI_METHODS", "ResultsFile",
           "build_frame_scaling", "build_evidence_settings", "build_per_task", "build_order", "build_sampling",
           "build_bars", "build_surghi", "build_diagnostic",
           "plot_frame_scaling", "plot_evidence_settings", "plot_per_task", "plot_order", "plot_sampling",
           "plot_bars", "plot_surghi", "plot_diagnostic", "plot_files", "build_files",
           "load_results", "load_accuracy_file", "budget_curve", "frame_curves", "ACCEPTED_SHAPES"]
