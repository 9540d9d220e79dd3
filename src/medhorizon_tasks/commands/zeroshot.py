"""``medhorizon-tasks surghi zeroshot``: the paper's zero-shot protocol for a dual encoder (CLIP, SurgCLIP,
HyperSurg, your own) over the SurgHiBench task items.

The protocol is :mod:`medhorizon_tasks.benchmarks.surghi.zeroshot`, the prompts
:mod:`~medhorizon_tasks.benchmarks.surghi.prompts`, the encoders ``adapters/encoders``, the run (sharding,
journal, outputs) :mod:`medhorizon_tasks.runs.zeroshot`. Exit status 0; 1 when frames could not be read
(their labels are errors, scored wrong) and ``MEDHORIZON_ALLOW_VIDEO_ERRORS`` is not set; 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .help import old_spellings

__all__ = ["add_parser"]

SYNTHETIC = "surghi_synthetic"


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``zeroshot`` to the ``surghi`` command's sub-parsers."""
    from ..benchmarks.surghi.zeroshot import DEFAULT_FPS, DEFAULT_FRAMES

    z = sub.add_parser(
        "zeroshot", help="zero-shot phase/step recognition with a dual encoder (the paper's protocol)",
        description="Label every evaluated frame of the SurgHiBench task items with a dual encoder, as the paper "
                    "does (sections 3.2-3.3, supplement A.2): the 1 FPS clip centred on the frame, text prompts "
                    "per class, cosine or Lorentz similarity, the argmax of each level; then write the "
                    "predictions, per-frame class scores, the score report (Tables 2-4 layout) and a leaderboard "
                    "submission. Sharded by video under `accelerate launch`, resumable.")
    z.add_argument("--encoder", required=True,
                   help="open_clip:ARCH/PRETRAINED (the paper's CLIP: open_clip:ViT-B-16/openai; a checkpoint file "
                        "as PRETRAINED), hf:ID_OR_FOLDER (transformers CLIPModel / SiglipModel), module:Class, or a "
                        "name registered under the entry-point group medhorizon_tasks.zeroshot_encoders")
    z.add_argument("--encoder-arg", action="append", metavar="KEY=VALUE",
                   help="keyword argument for a module:Class or entry-point encoder (repeatable)")
    where = z.add_mutually_exclusive_group()
    where.add_argument("--data", default=SYNTHETIC,
                       help=f"task items: JSONL/CSV rows dataset, video, frame, phase, step, timestamp_s, video_path "
                            f"(default: {SYNTHETIC}, the embedded sample; $SURGHI_DATA is not read)")
    where.add_argument("--synthetic", dest="data", action="store_const", const=SYNTHETIC,
                       help="the embedded synthetic sample (what --data defaults to)")
    z.add_argument("--video-root", help="folder the items' video_path values are relative to "
                                        "(default: $SURGHI_VIDEO_ROOT, else the items' folder)")
    z.add_argument("--hierarchy", help="hierarchy JSON (default: hierarchies.json beside the items, else shipped "
                                       "or derived from the items)")
    z.add_argument("--out", required=True, help="folder for the outputs and the journal (a rerun resumes)")
    z.add_argument("--prompts", help='prompts JSON {dataset: {"phases": {label: [prompt, ...]}, "steps": {...}}} '
                                     "(several prompts of a class are averaged); MIPO's (Tables 6-7) are shipped")
    z.add_argument("--label-template", default="{label}",
                   help="text of a class without a prompt (default: the label itself; reported as not the paper's)")
    z.add_argument("--frames", type=int, default=DEFAULT_FRAMES,
                   help=f"T: frames of the clip around each evaluated frame (default {DEFAULT_FRAMES})")
    z.add_argument("--fps", type=float, default=DEFAULT_FPS, help=f"rate of the clip (default {DEFAULT_FPS:g})")
    z.add_argument("--similarity", choices=("auto", "cosine", "lorentz"), default="auto",
                   help="default: the encoder's own (cosine unless it says lorentz)")
    z.add_argument("--curvature", type=float, help="c of the hyperboloid for lorentz (default: the encoder's, else 0.815, "
                   "HyperSurg's learned c, supplement A.4)")
    z.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: this process's GPU, else cpu)")
    z.add_argument("--precision", default="auto", help="auto (float16 on a GPU, float32 on the CPU), float32, "
                                                       "float16, bfloat16")
    z.add_argument("--batch-size", type=int, default=32, help="frames (image encoders) or clips per batch")
    z.add_argument("--max-side", type=int, default=448,
                   help="frames are decoded with the longer side at most this (0: native); the encoder's own "
                        "preprocessing then resizes them (default 448)")
    z.add_argument("--top-k", type=int, default=5, help="classes per level kept in scores.jsonl (default 5)")
    z.add_argument("--model-name", help="the submission's model name (default: the encoder's)")
    z.add_argument("--model-size", default="unknown", help="the submission's model size")
    z.add_argument("--quiet", action="store_true", help="no progress bar")
    z.add_argument("--json", action="store_true", help="print the report as JSON")
    old_spellings(z, "--quiet", "--no-progress")
    z.set_defaults(func=_cmd_zeroshot)
    return z


def _positive(name: str, value: int) -> None:
    from ..core.errors import MedHorizonError

    if value < 1:
        raise MedHorizonError(f"{name} must be >= 1, got {value}")


def _cmd_zeroshot(args) -> int:
    from ..adapters.encoders import load_encoder, parse_args, resolve_device, resolve_dtype
    from ..benchmarks.surghi.zeroshot import DEFAULT_CURVATURE, Setting, encoder_kind
    from ..benchmarks.videos import default_root
    from ..core.safeio import read_text
    from ..core.text import report_json
    from ..runs.preflight import allow_video_errors, is_main_process, preflight_or_refuse
    from ..runs.zeroshot import ZeroShotJob, load_inputs, run, shard_from_env

    for name in ("batch_size", "top_k", "frames"):
        _positive("--" + name.replace("_", "-"), getattr(args, name))
    main = is_main_process()
    if args.data == SYNTHETIC:
        from ..data.synthetic.surghi import build_surghi_sample

        sample = build_surghi_sample()
        data, root = sample.annotations_path, Path(args.video_root or sample.video_root)
    else:
        data = Path(args.data).expanduser()
        root = Path(args.video_root).expanduser() if args.video_root else default_root("surghi", data)
    inputs = load_inputs(data, hierarchy=args.hierarchy, prompts=args.prompts, template=args.label_template)
    preflight_or_refuse("surghi", data, root, main=main, progress=not args.quiet)
    device = resolve_device(args.device)
    dtype = resolve_dtype(args.precision, device)
    encoder_args = parse_args(args.encoder_arg)
    encoder = load_encoder(args.encoder, device=device, dtype=dtype, args=encoder_args)
    encoder_kind(encoder)
    similarity = getattr(encoder, "similarity", "cosine") if args.similarity == "auto" else args.similarity
    setting = Setting(args.frames, float(args.fps), similarity,
                      float(args.curvature or getattr(encoder, "curvature", None) or DEFAULT_CURVATURE),
                      bool(getattr(encoder, "embeddings_on_hyperboloid", False)))
    out = Path(args.out).expanduser()
    job = ZeroShotJob(inputs, root, out, encoder, args.encoder, setting, encoder_args, device, dtype,
                      args.batch_size, args.max_side or None, args.top_k,
                      args.model_name or str(getattr(encoder, "name", None) or args.encoder), args.model_size,
                      shard_from_env(), progress=not args.quiet)
    summary = run(job)
    if summary is None:
        print(f"[surghi zeroshot] process {job.shard[0] + 1} of {job.shard[1]} done; the process that finishes "
              f"last writes the outputs into {out}", file=sys.stderr)
        return 0
    if summary.get("already_written"):
        print(f"[surghi zeroshot] every video is labelled and the outputs in {out} are up to date", file=sys.stderr)
        rep_text = read_text(out / "report.txt")
        print(read_text(out / "report.json").rstrip("\n") if args.json else rep_text.rstrip("\n"))
        errors = "video errors:" in rep_text
    else:
        rep = summary["report"]
        print(report_json(rep) if args.json else summary["text"])
        if args.json:
            from ..runs.zeroshot_outputs import constant_warnings, tie_warnings

            for line in tie_warnings(rep["zeroshot"]["ties"]) + constant_warnings(rep["zeroshot"]["constant"]):
                print(line, file=sys.stderr)
        errors = bool(rep["zeroshot"]["video_errors"]["frames"])
        print(f"[surghi zeroshot] wrote {', '.join(Path(p).name for p in summary['files'].values())} into {out} "
              f"({summary['this_run']['videos_labelled']} video(s) labelled by this process, "
              f"{summary['this_run']['videos_reused']} from the journal)", file=sys.stderr)
    if errors and not allow_video_errors():
        print("medhorizon-tasks surghi zeroshot: some frames could not be read (scored wrong as video errors, see "
              "the report); set MEDHORIZON_ALLOW_VIDEO_ERRORS=1 to accept that", file=sys.stderr)
        return 1
    return 0
