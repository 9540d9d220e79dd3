"""Zero-shot dual encoders for ``surghi zeroshot``: ``--encoder SPEC`` -> an object with the
:class:`~medhorizon_tasks.benchmarks.surghi.zeroshot.ZeroShotEncoder` interface.

``SPEC``:

* ``open_clip:ARCH/PRETRAINED``: open-clip-torch (the paper's CLIP ViT-B/16 is ``open_clip:ViT-B-16/openai``);
  ``PRETRAINED`` may be a local checkpoint file (``open_clip:ViT-B-16//data/ckpt.pt``); ``open_clip:hf-hub:ORG/NAME``
  a Hub model, ``open_clip:local-dir:PATH`` a folder in open_clip's layout; ``open_clip:ARCH`` alone a randomly
  initialised model (said on stderr);
* ``hf:ID_OR_FOLDER``: transformers ``AutoModel`` + ``AutoProcessor`` with ``get_text_features`` /
  ``get_image_features`` (``CLIPModel``, ``SiglipModel``, ...);
* ``module:Attr``: a user's class or factory;
* ``NAME``: a factory registered under the entry-point group :data:`ENTRY_POINT_GROUP`
  (``synthetic_probe``, the encoder that reads the synthetic sample's visual code, is registered so).

A user's factory is called with ``device=`` (``"cpu"``, ``"cuda:0"``...), ``dtype=`` (``"float32"``,
``"float16"``, ``"bfloat16"``) and every ``--encoder-arg KEY=VALUE`` as keyword arguments (values as
text, or numbers / booleans when they read as JSON).
"""

from __future__ import annotations

import importlib
import json
import os
from importlib.metadata import entry_points
from typing import Any

from ...core.errors import MedHorizonError

__all__ = ["ENTRY_POINT_GROUP", "PRECISIONS", "load_encoder", "resolve_device", "resolve_dtype", "parse_args"]

ENTRY_POINT_GROUP = "medhorizon_tasks.zeroshot_encoders"
PRECISIONS = ("auto", "float32", "float16", "bfloat16")


def resolve_device(device: str | None) -> str:
    """``--device`` (default: the GPU of this process under ``accelerate launch``, else ``cuda`` when there
    is one, else ``cpu``)."""
    if device and device != "auto":
        return device
    if os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1"):  # no GPU visible: no need to import torch to know
        return "cpu"
    try:
        import torch
    except ImportError:
        return "cpu"
    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', 0)) % torch.cuda.device_count()}"
    return "cpu"


def resolve_dtype(precision: str | None, device: str) -> str:
    """``--precision`` (default ``auto``: half precision on a GPU, float32 on the CPU)."""
    if precision in (None, "auto"):
        return "float16" if device.startswith("cuda") else "float32"
    if precision not in PRECISIONS:
        raise MedHorizonError(f"--precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision


def parse_args(values: list[str] | None) -> dict[str, Any]:
    """``--encoder-arg KEY=VALUE`` -> ``{KEY: VALUE}`` (a value that reads as a JSON number, boolean or null
    is that; anything else is text)."""
    out: dict[str, Any] = {}
    for v in values or []:
        key, sep, text = v.partition("=")
        if not sep or not key.strip().isidentifier():
            raise MedHorizonError(f"--encoder-arg {v!r}: expected KEY=VALUE with KEY a Python name")
        try:
            value = json.loads(text)
            if not isinstance(value, (int, float, bool)) and value is not None:
                value = text
        except ValueError:
            value = text
        out[key.strip()] = value
    return out


def _user_factory(spec: str):
    module, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise MedHorizonError(f"--encoder {spec}: cannot import module {module!r} ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing: named, as entry points are
        raise MedHorizonError(f"--encoder {spec}: importing module {module!r} failed "
                              f"({type(exc).__name__}: {exc})") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise MedHorizonError(f"--encoder {spec}: module {module!r} has no {attr!r}")
        obj = getattr(obj, part)
    return obj


def _distribution(ep) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unnamed distribution"


def _entry_point(name: str):
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    owners = {(_distribution(ep), ep.value) for ep in found}
    if len(owners) > 1:  # which one runs would depend on the order of sys.path: never chosen silently
        listed = "; ".join(f"{dist} ({value})" for dist, value in sorted(owners))
        raise MedHorizonError(f"--encoder {name}: more than one installed package registers an encoder of that name "
                              f"under {ENTRY_POINT_GROUP!r}: {listed}; uninstall one, or name the class itself "
                              "(--encoder module:Class)")
    if not found:
        known = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
        raise MedHorizonError(f"--encoder {name!r}: not open_clip:..., hf:... or module:Class, and no encoder of "
                              f"that name is registered under the entry-point group {ENTRY_POINT_GROUP!r} "
                              f"(registered: {', '.join(known) or 'none'})")
    try:
        return found[0].load()
    except Exception as exc:  # noqa: BLE001 - a plug-in's import error, named
        raise MedHorizonError(f"--encoder {name}: entry point {found[0].value} failed to load "
                              f"({type(exc).__name__}: {exc})") from None


def load_encoder(spec: str, *, device: str, dtype: str, args: dict[str, Any] | None = None):
    """The encoder ``spec`` names, on ``device`` in ``dtype`` (see the module doc)."""
    args = dict(args or {})
    if spec.startswith("open_clip:"):
        from .open_clip import OpenClipEncoder

        return OpenClipEncoder.from_spec(spec[len("open_clip:"):], device=device, dtype=dtype, **args)
    if spec.startswith("hf:"):
        from .hf import HFEncoder

        return HFEncoder(spec[len("hf:"):], device=device, dtype=dtype, **args)
    factory = _user_factory(spec) if ":" in spec else _entry_point(spec)
    try:
        return factory(device=device, dtype=dtype, **args)
    except TypeError as exc:
        raise MedHorizonError(f"--encoder {spec}: calling {getattr(factory, '__name__', factory)!r} with device, "
                              f"dtype and {', '.join(args) or 'no --encoder-arg'} failed: {exc}") from None
