"""The run layer shared by both frameworks: pre-flight checks, launching the real CLI, an honest exit status.

Above the benchmarks (it knows where each benchmark's data and videos are
configured), below the framework adapters (it imports neither lmms-eval nor
VLMEvalKit): ``preflight`` checks that a run can mean something before any
model is loaded; ``launch`` runs a framework's own CLI and turns what it wrote
into one verdict and exit status.
"""
