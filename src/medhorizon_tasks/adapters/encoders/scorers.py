"""Relevance scorers for ``medhorizon-tasks select --scorer SPEC``: how relevant each candidate frame is to a question.

A scorer is a dual encoder with the :class:`~medhorizon_tasks.benchmarks.surghi.zeroshot.ZeroShotEncoder`
image interface (``encode_text``, ``encode_images``): a frame's relevance to a question is the cosine of
their embeddings, and the frame embeddings (computed once per video, shared by all its questions) are
what the selectors that compare frames (WFS-SB's MMR, ViLAMP's suppression) compare. ``SPEC``:

* a name registered under the entry-point group :data:`SCORER_GROUP` (``synthetic_probe``: the code-reading
  probe of the synthetic MedHorizon benchmark, :class:`~medhorizon_tasks.data.synthetic.probe_scorer.TagProbe`);
* ``hf-itm:ID_OR_FOLDER``: an image-text matching head (BLIP ITM, AKS's default; BLIP-2 ITM, WFS-SB's),
  :class:`~.itm.ItmScorer`: relevance = the head's match probability of each frame-question pair;
* anything ``surghi zeroshot --encoder`` takes (``open_clip:ViT-B-32/openai``, ``hf:ID_OR_FOLDER``,
  ``module:Class``, a name of ``medhorizon_tasks.zeroshot_encoders``), see :func:`~.load_encoder`.

A scorer whose relevance is a probability in [0, 1] says so with ``relevance_scale = "probability"`` (the
matching heads do); any other is taken as not one (a dual encoder's cosine), and WFS-SB, released on
probabilities, then gets it min-max normalised per video
(:func:`~medhorizon_tasks.core.selectors.relevance_for`).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from ...core.errors import MedHorizonError
from . import load_encoder

__all__ = ["SCORER_GROUP", "load_scorer"]

SCORER_GROUP = "medhorizon_tasks.relevance_scorers"


def load_scorer(spec: str, *, device: str, dtype: str, args: dict[str, Any] | None = None):
    """The scorer ``spec`` names (see the module doc), checked for ``encode_text`` and ``encode_images``."""
    args = dict(args or {})
    if spec.startswith("hf-itm:"):
        from .itm import ItmScorer

        return ItmScorer(spec[len("hf-itm:"):], device=device, dtype=dtype, **args)
    found = [ep for ep in entry_points(group=SCORER_GROUP) if ep.name == spec]
    if found:
        try:
            factory = found[0].load()
        except Exception as exc:  # noqa: BLE001 - a plug-in's import error, named
            raise MedHorizonError(f"--scorer {spec}: entry point {found[0].value} failed to load "
                                  f"({type(exc).__name__}: {exc})") from None
        scorer = factory(device=device, dtype=dtype, **args)
    else:
        scorer = load_encoder(spec, device=device, dtype=dtype, args=args)
    needed = ("encode_images", "score_pairs" if callable(getattr(scorer, "score_pairs", None)) else "encode_text")
    missing = [m for m in needed if not callable(getattr(scorer, m, None))]
    if missing:
        raise MedHorizonError(f"--scorer {spec}: {type(scorer).__name__} has no {', '.join(missing)} (a scorer is "
                              "an image-text dual encoder: frames and questions embedded into one space)")
    return scorer
