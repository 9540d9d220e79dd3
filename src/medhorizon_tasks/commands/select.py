"""``medhorizon-tasks select``: query-aware frame selection (AKS, WFS-SB, ViLAMP's keyframes, your own) for the
MedHorizon items, as a resumable pre-pass, and the evidence recall of any selection without a model.

The selectors are :mod:`medhorizon_tasks.core.selectors`, the scorers
:mod:`medhorizon_tasks.adapters.encoders.scorers`, the run (sharding, journal, outputs)
:mod:`medhorizon_tasks.runs.select`. The task variants ``medhorizon_aks128``, ``medhorizon_wfs128`` and
``medhorizon_vilamp_select128`` show the selected frames (``$MEDHORIZON_SELECTION`` = the ``--out`` folder).
Exit status 0; 1 when videos could not be read and ``MEDHORIZON_ALLOW_VIDEO_ERRORS`` is not set; 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    s = sub.add_parser(
        "select", help="query-aware frame selection (AKS, WFS-SB, ViLAMP) as a resumable pre-pass; evidence recall",
        description="Score every 1 FPS candidate frame of each MedHorizon video against each question with a dual "
                    "encoder or a matching head (each frame decoded and embedded once per video), let the selectors pick each item's "
                    "frames, and write the selections (with the scorer, candidate fps and budget) for the task "
                    "variants medhorizon_aks128 / medhorizon_wfs128 / medhorizon_vilamp_select128. The uniform "
                    "plan of each budget (the medhorizon_frames<N> tasks' plan) is written beside. Sharded by video under `accelerate launch`, "
                    "resumable.")
    s.add_argument("--selector", default="aks",
                   help="uniform, aks, wfs_sb, vilamp, or a name registered under the entry-point group "
                        "medhorizon_tasks.frame_selectors; several, comma-separated, share one scoring pass")
    s.add_argument("--selector-arg", action="append", metavar="KEY=VALUE",
                   help="keyword argument of every selector named (e.g. t1=0.7, depth=4, ViLAMP's "
                        "max_candidates=600 or null; repeatable)")
    s.add_argument("--scorer", required=True,
                   help="open_clip:ARCH/PRETRAINED (AKS/ViLAMP's CLIP: open_clip:ViT-B-32/openai), hf:ID_OR_FOLDER, "
                        "hf-itm:ID_OR_FOLDER (a BLIP or BLIP-2 image-text matching head: AKS's default "
                        "hf-itm:Salesforce/blip-itm-large-coco, WFS-SB's hf-itm:Salesforce/blip2-itm-vit-g), "
                        "module:Class, synthetic_probe (reads the synthetic benchmark's code), or a name registered "
                        "under medhorizon_tasks.relevance_scorers / medhorizon_tasks.zeroshot_encoders")
    s.add_argument("--scorer-arg", action="append", metavar="KEY=VALUE", help="keyword argument of the scorer")
    s.add_argument("--budget", default="128",
                   help="frames per item (the paper's rows: 128); several, comma-separated, for a recall curve")
    s.add_argument("--fps", type=float, default=1.0, help="candidate frames per second (default 1, as AKS/WFS-SB)")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--synthetic", action="store_true",
                       help="the embedded synthetic benchmark (adds the needle probe's accuracy on the selections)")
    where.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
    s.add_argument("--video-root", help="folder the items' video_path values are relative to "
                                        "(default: $MEDHORIZON_VIDEO_ROOT, else the data's folder)")
    s.add_argument("--out", required=True, help="folder for the selections and the journal (a rerun resumes)")
    s.add_argument("--recall", action="store_true",
                   help="print and record each selection's evidence recall (items and windows hit)")
    s.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: this process's GPU, else cpu)")
    s.add_argument("--precision", default="auto", help="auto, float32, float16, bfloat16")
    s.add_argument("--batch-size", type=int, default=32, help="frames per encoder batch")
    s.add_argument("--max-side", type=int, default=448, help="frames are decoded with the longer side at most this")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--json", action="store_true", help="print select.json")
    s.set_defaults(func=_cmd_select)
    return s


def _budgets(text: str) -> list[int]:
    from ..core.errors import MedHorizonError

    try:
        values = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise MedHorizonError(f"--budget {text!r}: expected whole numbers >= 1, comma-separated")
    return sorted(set(values))


def _cmd_select(args) -> int:
    from ..adapters.encoders import parse_args, resolve_device, resolve_dtype
    from ..adapters.encoders.scorers import load_scorer
    from ..benchmarks.medhorizon.release import load_release
    from ..benchmarks.videos import default_root
    from ..core.errors import MedHorizonError
    from ..core.safeio import read_text
    from ..core.selectors import load_selector
    from ..runs.preflight import allow_video_errors, is_main_process, preflight_or_refuse
    from ..runs.select import SelectJob, run, shard_from_env

    if args.batch_size < 1:
        raise MedHorizonError(f"--batch-size must be >= 1, got {args.batch_size}")
    budgets = _budgets(args.budget)
    names = [n.strip() for n in args.selector.split(",") if n.strip()]
    if not names:
        raise MedHorizonError("--selector: name at least one selector")
    sel_args = parse_args(args.selector_arg)
    selectors = [load_selector(n, b, sel_args) for n in dict.fromkeys(names) for b in budgets]
    main = is_main_process()
    if args.synthetic:
        from ..data.synthetic.medhorizon import build_synthetic

        bench = build_synthetic(progress=main and not args.quiet)
        data, root = bench.data_path, Path(args.video_root or bench.video_root)
    else:
        from ..benchmarks.medhorizon.release import DATA_ENV
        from ..core.settings import env_text

        raw = args.data or env_text(DATA_ENV)
        if not raw:
            raise MedHorizonError(f"--data or ${DATA_ENV}: the MedHorizon release to select frames for")
        data = Path(raw).expanduser()
        root = Path(args.video_root).expanduser() if args.video_root else default_root("medhorizon", data)
    preflight_or_refuse("medhorizon", data, root, main=main, progress=not args.quiet)
    device = resolve_device(args.device)
    dtype = resolve_dtype(args.precision, device)
    scorer_args = parse_args(args.scorer_arg)
    scorer = load_scorer(args.scorer, device=device, dtype=dtype, args=scorer_args)
    out = Path(args.out).expanduser()
    job = SelectJob(load_release(data), root, out, scorer, args.scorer, selectors, scorer_args, float(args.fps),
                    device, dtype, args.batch_size, args.max_side or None, needle=bool(args.synthetic),
                    recall=bool(args.recall), shard=shard_from_env(), progress=not args.quiet)
    summary = run(job)
    if summary is None:
        print(f"[select] process {job.shard[0] + 1} of {job.shard[1]} done; the process that finishes last "
              f"writes the selections into {out}", file=sys.stderr)
        return 0
    if summary.get("already_written"):
        from ..core.safeio import read_json
        from ..runs.select_outputs import summary_lines

        print(f"[select] every video is selected and the outputs in {out} are up to date", file=sys.stderr)
        saved = read_json(out / "select.json")
        print(read_text(out / "select.json").rstrip("\n") if args.json else "\n".join(summary_lines(saved)))
        errors = bool(saved["video_errors"])
    else:
        from ..core.text import report_json

        print(report_json({k: v for k, v in summary.items() if k != "text"}) if args.json else summary["text"])
        errors = bool(summary["video_errors"])
        print(f"[select] wrote the selections into {out} ({summary['this_run']['videos_selected']} video(s) "
              f"selected by this process, {summary['this_run']['videos_reused']} from the journal)", file=sys.stderr)
        if summary.get("rewritten"):
            print(f"[select] {', '.join(summary['rewritten'])} in {out} changed or went missing since this run "
                  "wrote it: written again from the journal", file=sys.stderr)
    if errors and not allow_video_errors():
        print("medhorizon-tasks select: some videos could not be read (their items have no selection, see "
              "select.json); set MEDHORIZON_ALLOW_VIDEO_ERRORS=1 to accept that", file=sys.stderr)
        return 1
    return 0
