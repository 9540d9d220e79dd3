"""What a ``surghi zeroshot`` run writes into ``--out``:

* ``predictions.jsonl``: one row per evaluated frame, ``dataset, video, frame, phase, step`` in the items'
  order (what ``score --benchmark surghi`` and ``leaderboard make`` read); a frame whose video could not
  be read has null labels and ``error`` (scored wrong, counted as an error, never an answer); a dataset
  annotated with phases only has a null step;
* ``scores.jsonl``: per frame, the best ``--top-k`` classes of each level with their scores (mean
  similarity over the class's prompts), for later analysis;
* ``report.json`` (``score``'s report plus a ``zeroshot`` block: encoder, protocol, prompts and their
  source per dataset and level, frames decoded and encoded) and ``report.txt`` (the paper's Tables 2-4
  layout);
* ``submission.json``: a leaderboard submission, validated against the items;
* ``run.json``: the run's identity (what the journal keys on).
"""

from __future__ import annotations

from pathlib import Path

from ..benchmarks.data import load_benchmark_data
from ..benchmarks.surghi.scoring import Prediction, dumps_report, evaluate, format_paper_tables
from ..benchmarks.surghi.zeroshot import encoder_kind
from ..core.errors import MedHorizonError
from ..core.safeio import atomic_write_json, atomic_write_jsonl, atomic_write_text
from ..core.text import plural
from ..leaderboard.submission import make_submission, write_submission
from .zeroshot_video import VideoStats

__all__ = ["FILES", "write_outputs", "describe_protocol", "tie_block", "tie_warnings", "constant_block",
           "constant_warnings", "MOST"]

FILES = {"predictions": "predictions.jsonl", "scores": "scores.jsonl", "report": "report.json",
         "report_text": "report.txt", "submission": "submission.json", "run": "run.json"}


def describe_protocol(kind: str, setting) -> str:
    how = ("each frame encoded alone, similarities averaged over the clip" if kind == "image"
           else "one embedding per clip")
    sim = (f"negative Lorentz distance (c = {setting.curvature:g})" if setting.similarity == "lorentz"
           else "cosine similarity")
    return f"{setting.frames} frames at {setting.fps:g} FPS centred on the evaluated frame, {how}; {sim}"


def _frames_block(stats: VideoStats, n_rows: int) -> dict:
    per = stats.encoded_frames / stats.distinct if stats.distinct and stats.encoded_frames else None
    return {"evaluated": n_rows, "distinct": stats.distinct, "decoded": stats.decoded,
            "encoded": stats.encoded_frames, "clips_encoded": stats.encoded_clips,
            "encoded_per_distinct_frame": per}


MOST = 0.5  # a share of tied frames above this is "most" of them: warned


def tie_block(job, per_row: dict) -> dict:
    """Per level, the frames scored on two or more classes and how many tied on all of them; MedHorizonError
    when every one did (the labels would be each dataset's first class, a run of nothing)."""
    block = {}
    for level in ("phases", "steps"):
        n = sum(1 for i, r in enumerate(job.inputs.rows) if per_row[i][0] and level in per_row[i][0]
                and len(job.inputs.prompts[r.dataset][level].labels) > 1)
        if n:
            block[level] = {"frames": n, "tied": 0, "share": 0.0}
    return block


def tie_warnings(ties: dict) -> list[str]:
    return [f"warning: {t['tied']} of {plural(t['frames'], 'frame')} ({100 * t['share']:.0f}%) tie on every "
            f"{level[:-1]} class: their {level[:-1]} label is the first class listed, not a prediction"
            for level, t in ties.items() if t["share"] > MOST]


def constant_block(rows, preds: list[dict]) -> dict:
    """Per dataset and level (of a dataset with several classes), the predicted label that takes the most
    frames, its share of the frames with a prediction, and the largest share any one label has in the
    annotations: ``{dataset: {level: {"label", "frames", "of", "share", "annotated_share"}}}``."""
    from collections import Counter

    out: dict = {}
    for level in ("phase", "step"):
        by_ds: dict[str, tuple[Counter, Counter]] = {}
        for r, p in zip(rows, preds):
            if p.get(level) is None:
                continue
            predicted, annotated = by_ds.setdefault(r.dataset, (Counter(), Counter()))
            predicted[p[level]] += 1
            if getattr(r, level) is not None:
                annotated[getattr(r, level)] += 1
        for ds, (predicted, annotated) in by_ds.items():
            if len(annotated) < 2:
                continue  # one class: every prediction is that class, rightly
            label, k = predicted.most_common(1)[0]
            n = sum(predicted.values())
            out.setdefault(ds, {})[level + "s"] = {
                "label": label, "frames": k, "of": n, "share": k / n,
                "annotated_share": annotated.most_common(1)[0][1] / sum(annotated.values())}
    return out


def constant_warnings(block: dict) -> list[str]:
    """A warning per dataset and level whose predictions are nearly constant: one label takes most frames
    (more than half) and more of them than any label has in the annotations."""
    return [f"warning: {ds} {level}: {c['frames']} of {c['of']} frames ({100 * c['share']:.0f}%) are labelled "
            f"{c['label']!r}, where the annotations' most common {level[:-1]} covers {100 * c['annotated_share']:.0f}%: "
            "the predictions are nearly constant, so these scores say little about the encoder"
            for ds, levels in block.items() for level, c in levels.items()
            if c["share"] > MOST and c["share"] > c["annotated_share"]]


def _prompt_lines(block: dict) -> list[str]:
    lines = ["prompts:"]
    for ds, levels in block["prompts"].items():
        for level, p in levels.items():
            lines.append(f"  {ds} {level}: {p['source']}")
    return lines + [f"  note: {n}" for n in block["notes"]]


def report_text(rep: dict, model: str) -> str:
    z = rep["zeroshot"]
    f = z["frames"]
    lines = [f"SurgHiBench zero-shot: {z['encoder']} ({z['kind']} encoder; {z['protocol']})", "",
             format_paper_tables(rep, model), "", *_prompt_lines(z)]
    encoded = (f"{f['encoded']} encoded ({f['encoded_per_distinct_frame']:.2f} per distinct frame)"
               if f["encoded"] else f"{f['clips_encoded']} clips encoded")
    lines.append(f"frames: {f['evaluated']} evaluated, {f['distinct']} distinct in their clips, {f['decoded']} "
                 f"decoded, {encoded}")
    lines += tie_warnings(z.get("ties", {}))
    lines += constant_warnings(z.get("constant", {}))
    for ds, h in rep.get("hierarchies", {}).items():
        tl = "-" if h["tree_likeness"] is None or h["tree_likeness"] != h["tree_likeness"] \
            else f"{100 * h['tree_likeness']:.0f}%"
        lines.append(f"hierarchy {ds}: {h['source']}, {h['phases']} phases, {h['steps']} steps, tree-likeness {tl}")
    err = z["video_errors"]
    if err["frames"]:
        lines.append(f"video errors: {plural(err['frames'], 'frame')} of {plural(err['videos'], 'video')} could not "
                     f"be read (scored wrong, counted in n_errors): " + "; ".join(err["messages"][:5]))
    return "\n".join(lines)


def write_outputs(job, units, records: dict, identity: dict, this_run: dict) -> dict:
    """Write every output from the journaled ``records`` (``{VideoUnit: record}``); the summary."""
    rows = job.inputs.rows
    out = Path(job.out)
    per_row: dict[int, tuple[dict | None, str | None]] = {}
    stats = VideoStats()
    failed: list[str] = []
    for u in units:
        rec = records[u]
        stats.add(VideoStats(**rec["stats"]))
        if rec["error"]:
            failed.append(rec["error"])
        for k, i in enumerate(u.rows):
            per_row[i] = (None, rec["error"]) if rec["error"] else (rec["results"][k], None)
    ties = tie_block(job, per_row)
    for level, t in ties.items():
        t["tied"] = getattr(stats, f"tied_{level}")
        t["share"] = t["tied"] / t["frames"]
        if t["tied"] == t["frames"]:
            raise MedHorizonError(
                f"surghi zeroshot: every one of the {t['frames']} frames scored ties on every {level[:-1]} class "
                f"(all classes scored the same, so each label would be the first class listed); nothing is written. "
                f"The encoder {job.encoder_spec} does not tell the {level[:-1]} prompts or the frames apart: check "
                "the prompts (--prompts, --label-template) and the encoder")
    preds, scores = [], []
    for i, r in enumerate(rows):
        res, err = per_row[i]
        pred = {"dataset": r.dataset, "video": r.video, "frame": r.frame,
                "phase": res["phases"][0] if res else None,
                "step": res["steps"][0] if res and "steps" in res else None}
        score = {"uid": r.uid, "dataset": r.dataset, "video": r.video, "frame": r.frame,
                 "timestamp_s": r.timestamp_s}
        if res:
            score.update({f"{level}_top": got[1] for level, got in res.items()})
        else:
            pred["error"] = score["error"] = err
        preds.append(pred)
        scores.append(score)
    paths = {k: out / name for k, name in FILES.items()}
    atomic_write_jsonl(paths["predictions"], preds)
    atomic_write_jsonl(paths["scores"], scores)

    predictions = {r.key: Prediction(p["phase"], p["step"], error=p.get("error")) for r, p in zip(rows, preds)}
    rep = evaluate(rows, predictions, job.inputs.hierarchies).report()
    kind = encoder_kind(job.encoder)
    rep["zeroshot"] = {
        "encoder": job.encoder_spec, "model": job.model, "kind": kind, "protocol": describe_protocol(kind, job.setting),
        "setting": job.setting.to_json(), "precision": job.dtype, "device": job.device,
        "prompts": {ds: {level: {"source": lp.source, "paper": lp.paper,
                                 "prompts": sum(len(p) for p in lp.prompts)}
                         for level, lp in levels.items()} for ds, levels in job.inputs.prompts.items()},
        "notes": list(job.inputs.notes), "frames": _frames_block(stats, len(rows)), "ties": ties,
        "constant": constant_block(rows, preds),
        "video_errors": {"videos": len(failed), "frames": sum(1 for p in preds if p.get("error")),
                         "messages": failed},
    }
    atomic_write_text(paths["report"], dumps_report(rep) + "\n")
    text = report_text(rep, job.model)
    atomic_write_text(paths["report_text"], text + "\n")
    data = load_benchmark_data("surghi", job.inputs.data, hierarchy=job.inputs.hierarchy_file)
    prompt_kinds = sorted({"the paper's" if lp.paper else lp.source.split(" [")[0] for levels in
                           job.inputs.prompts.values() for lp in levels.values()})
    sub = make_submission(data, paths["predictions"], model=job.model, size=job.size, fps=job.setting.fps,
                          frames=job.setting.frames,
                          notes=f"zero-shot {kind} encoder {job.encoder_spec}; {describe_protocol(kind, job.setting)}; "
                                f"prompts: {', '.join(prompt_kinds)}")
    write_submission(sub, paths["submission"])
    atomic_write_json(paths["run"], {"identity": identity, "last_run": this_run, "files": FILES})
    return {"report": rep, "text": text, "files": {k: str(p) for k, p in paths.items()}, "this_run": this_run}
