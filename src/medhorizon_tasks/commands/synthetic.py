"""``medhorizon-tasks synthetic``: (re)generate the embedded synthetic MedHorizon benchmark, or the Sureon or
SurgHiBench sample."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``synthetic`` to the main parser's sub-parsers."""
    y = sub.add_parser("synthetic", help="(re)generate the embedded synthetic benchmark")
    y.add_argument("--out", default=None, help="folder (default: $MEDHORIZON_SYNTHETIC_DIR or the user cache)")
    y.add_argument("--benchmark", default="medhorizon", choices=["medhorizon", "sureon", "surghi"],
                   help="which synthetic sample (default: the MedHorizon benchmark)")
    y.add_argument("--seed", type=int, default=0)
    y.add_argument("--force", action="store_true", help="regenerate even if cached")
    y.add_argument("--quiet", action="store_true")
    y.set_defaults(func=_cmd_synthetic)
    return y


def _cmd_synthetic(args) -> int:
    if args.benchmark == "sureon":
        from ..data.synthetic.sureon import build_sureon_sample

        sample = build_sureon_sample(args.out, seed=args.seed)
        print(f"data:   {sample.data_path}\nvideos: {sample.video_root}")
        return 0
    if args.benchmark == "surghi":
        from ..data.synthetic.surghi import build_surghi_sample

        sg = build_surghi_sample(args.out, seed=args.seed)
        print(f"annotations: {sg.annotations_path}\nhierarchy:   {sg.hierarchy_path}\nvideos:      {sg.video_root}")
        return 0
    from ..data.synthetic.medhorizon import build_synthetic

    bench = build_synthetic(args.out, seed=args.seed, force=args.force, progress=not args.quiet)
    print(f"data:   {bench.data_path}")
    print(f"videos: {bench.video_root}")
    return 0
