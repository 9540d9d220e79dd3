"""The example at the end of each command's ``--help`` (and of its section of ``docs/cli.md``): commands that run
as written, in an empty folder, on the embedded synthetic data and with the probe models (a ``run`` line first
where the command reads a run's samples). ``tests/test_help_examples.py`` parses every line and runs the cheap
ones; :data:`NEEDS_DOWNLOAD` names the commands whose only input is a download, as the docs pages mark them.

``run`` and ``vlmeval`` have their own help text (the framework's arguments are theirs), examples included.
"""

from __future__ import annotations

__all__ = ["EXAMPLES", "NEEDS_DOWNLOAD", "epilog"]

_NEEDLE = "medhorizon-tasks run --model medhorizon_needle --tasks medhorizon_synthetic --output_path runs/needle"
_RANDOM = "medhorizon-tasks run --model medhorizon_random --tasks medhorizon_synthetic --output_path runs/random"
_NEEDLE_SAMPLES = "runs/needle/*_samples_medhorizon_synthetic.jsonl"
_RANDOM_SAMPLES = "runs/random/*_samples_medhorizon_synthetic.jsonl"
_MAKE = ("medhorizon-tasks leaderboard make --predictions " + _NEEDLE_SAMPLES
         + ' --model "Needle probe" --model-size unknown --fps 1 --cap 64 --out subs/needle.json')
_MAKE_RANDOM = ("medhorizon-tasks leaderboard make --predictions " + _RANDOM_SAMPLES
                + ' --model "Random guess" --model-size unknown --frames 0 --out subs/random.json')
_BLIND = [f"medhorizon-tasks run --model medhorizon_random --model_args seed={seed} --tasks medhorizon_synthetic_text "
          f"--output_path runs/blind{seed}" for seed in (1, 2, 3)]

#: command words -> example lines, in order (a later line may read what an earlier one wrote).
EXAMPLES: dict[tuple[str, ...], tuple[str, ...]] = {
    (): ("medhorizon-tasks check --synthetic", "medhorizon-tasks demo"),
    ("score",): (_NEEDLE, f"medhorizon-tasks score --predictions {_NEEDLE_SAMPLES}"),
    ("compare",): (_NEEDLE, _RANDOM,
                   f"medhorizon-tasks compare {_NEEDLE_SAMPLES} {_RANDOM_SAMPLES} --labels needle,random"),
    ("blind-audit",): (*_BLIND, "medhorizon-tasks blind-audit runs/blind*/*_samples_medhorizon_synthetic_text.jsonl"),
    ("demo",): ("medhorizon-tasks demo --out medhorizon_demo",),
    ("diagnose",): ("medhorizon-tasks diagnose order --model medhorizon_needle --synthetic --out runs/needle-order",),
    ("sweep",): ("medhorizon-tasks sweep --model medhorizon_needle --synthetic --limit 8 --out runs/needle-sweep",),
    ("stats",): ("medhorizon-tasks stats --synthetic",),
    ("select",): ("medhorizon-tasks select --synthetic --selector uniform,aks --scorer synthetic_probe --budget 16 "
                  "--recall --out runs/select16",),
    ("plot",): (_NEEDLE, f"medhorizon-tasks score --predictions {_NEEDLE_SAMPLES} --json > needle.json",
                "medhorizon-tasks plot needle.json --out plots/"),
    ("prepare-frames",): ("medhorizon-tasks prepare-frames --synthetic --plans cap64 --quiet",),
    ("cache",): ("medhorizon-tasks cache info", "medhorizon-tasks cache info --index"),
    ("synthetic",): ("medhorizon-tasks synthetic", "medhorizon-tasks synthetic --benchmark sureon"),
    ("check",): ("medhorizon-tasks check --synthetic",),
    ("task-path",): ("medhorizon-tasks task-path",),
    ("doctor",): ("medhorizon-tasks doctor", "medhorizon-tasks doctor --json"),
    ("leaderboard",): ("medhorizon-tasks leaderboard version --benchmark medhorizon --synthetic",),
    ("leaderboard", "version"): ("medhorizon-tasks leaderboard version --benchmark medhorizon --synthetic",),
    ("leaderboard", "make"): (_NEEDLE, _MAKE),
    ("leaderboard", "validate"): (_NEEDLE, _MAKE, "medhorizon-tasks leaderboard validate subs/needle.json --synthetic"),
    ("leaderboard", "build"): (_NEEDLE, _RANDOM, _MAKE, _MAKE_RANDOM,
                               "medhorizon-tasks leaderboard build subs/*.json --synthetic --out board/"),
    ("leaderboard", "serve"): ("medhorizon-tasks leaderboard serve --synthetic --port 8000 --db sqlite:///board.sqlite3",),
    ("leaderboard", "submit"): (_NEEDLE, _MAKE,
                                "medhorizon-tasks leaderboard submit subs/needle.json --server http://127.0.0.1:8000"),
    ("build-dataset",): ("medhorizon-tasks build-dataset --synthetic --out hf_dataset",),
    ("videos",): ("medhorizon-tasks videos check --synthetic",),
    ("videos", "check"): ("medhorizon-tasks videos check --synthetic",),
    ("videos", "link"): ("medhorizon-tasks videos link --data mlvbench_test.jsonl --video-root mh_videos "
                         "--from AutoLaparo=downloads/autolaparo "
                         "--from Galar=downloads/galar",),
    ("surghi",): ("medhorizon-tasks surghi zeroshot --encoder synthetic_probe --out runs/zs --quiet",),
    ("surghi", "import"): ("medhorizon-tasks surghi import --source grasp --data GraSP/annotations --out grasp_rows.jsonl",),
    ("surghi", "zeroshot"): ("medhorizon-tasks surghi zeroshot --encoder synthetic_probe --out runs/zs --quiet",),
    ("protocol",): ("medhorizon-tasks protocol Qwen3-VL-8B", "medhorizon-tasks protocol --list"),
}

#: commands whose example reads a download (GraSP's annotations, two sources' videos: docs/surghibench.md and
#: docs/data.md say where they come from)
NEEDS_DOWNLOAD = {("surghi", "import"), ("videos", "link")}


def epilog(words: tuple[str, ...]) -> str | None:
    """The ``--help`` epilog of the command ``words``: its example lines, or None when it has none."""
    lines = EXAMPLES.get(words)
    if not lines:
        return None
    where = ("needs the sources' downloads" if words in NEEDS_DOWNLOAD
             else "on the embedded synthetic data, in an empty folder")
    return f"example{'s' if len(lines) > 1 else ''} ({where}):\n" + "\n".join("  " + x for x in lines)
