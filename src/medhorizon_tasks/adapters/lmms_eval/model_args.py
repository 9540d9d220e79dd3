"""The model args of this package's lmms-eval models, checked before anything is loaded.

lmms-eval hands ``--model_args`` to a model's constructor as keyword
arguments, and what a constructor does with one it does not know varies:
the probes swallowed it (``sead=3`` ran with seed 0), most wrappers stop on an
``assert`` after the imports (38 s, a traceback), lmms-eval's ``openai`` warns
and drops it. A number out of range was worse: ``pixel_factor=0`` became 32.

Here every model of this package (:data:`~.ours.PROBES`, the bridges of
:data:`~.bridges.manifest.BRIDGES`) has its own args declared (:data:`SPECS`:
name, what a value can be); the args a bridge inherits are its lmms-eval
wrapper's ``__init__`` parameters, read from lmms-eval's source
(:func:`~.installed.wrapper_arg_names`, never imported). :func:`model_args_problem`
is the one check, called

* by ``medhorizon-tasks run`` / ``diagnose`` / ``sweep`` before lmms-eval is
  started (:mod:`.request_check`), and by the start-up hook of an ``lmms-eval``
  run (:mod:`.startup`), both answering with one line and exit status 2;
* by every one of these models as lmms-eval creates it
  (:class:`CheckedModelArgs`), for a run started from Python.

``medhorizon_resume`` and ``medhorizon_attention`` pass every arg but their
own to their ``inner`` model, which is checked in turn when it is this
package's. Models of other packages are left to their own wrappers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...core.errors import MedHorizonError

__all__ = ["Arg", "ModelSpec", "SPECS", "EVALUATOR_ARGS", "parse_model_args", "model_args_problem",
           "refuse_bad_model_args", "CheckedModelArgs", "ModelArgsError", "accepted_args"]

#: what lmms-eval's evaluator passes every model besides ``--model_args``
EVALUATOR_ARGS = ("batch_size", "max_batch_size", "device")


class ModelArgsError(MedHorizonError, ValueError):
    """A model arg the model does not take, or a value it cannot be."""


# ------------------------------------------------------------------ what a value can be

def _number(value, integer: bool):
    """``value`` (as typed, or as lmms-eval converted it: int, float, bool, str) as a number, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = value
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            return None
    if not math.isfinite(number):
        return None
    if integer:
        return int(number) if float(number).is_integer() else None
    return float(number)


@dataclass(frozen=True)
class Arg:
    """One model arg: its name and, for a number, its range (``low``/``high`` inclusive, ``above`` exclusive),
    for a word its ``choices``; ``rule`` says it in words, ``check`` adds a rule of its own."""

    name: str
    kind: str = "str"  # str | int | float | bool | choice
    low: float | None = None
    high: float | None = None
    above: float | None = None
    choices: tuple[str, ...] = ()
    rule: str = ""
    check: Callable[[object], bool] | None = None
    required: bool = False

    def what(self) -> str:
        if self.rule:
            return self.rule
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind in ("int", "float"):
            word = "an integer" if self.kind == "int" else "a number"
            if self.above is not None:
                return f"{word} > {self.above:g}"
            if self.low is not None and self.high is not None:
                return f"{word} from {self.low:g} to {self.high:g}"
            if self.low is not None:
                return f"{word} >= {self.low:g}"
            return word
        return "a text"

    def problem(self, value) -> str | None:
        """Why ``value`` cannot be this arg (None when it can)."""
        if self.kind == "bool":
            ok = isinstance(value, bool) or str(value).strip().lower() in ("1", "0", "true", "false", "yes", "no",
                                                                             "on", "off")
        elif self.kind == "choice":
            ok = str(value).strip().lower() in {c.lower() for c in self.choices}
        elif self.kind in ("int", "float"):
            n = _number(value, self.kind == "int")
            ok = n is not None and (self.low is None or n >= self.low) and (self.high is None or n <= self.high) \
                and (self.above is None or n > self.above)
            value = n if ok else value
        else:
            ok = not self.required or str(value).strip() != ""
        if ok and self.check is not None:
            ok = self.check(value)
        return None if ok else f"expected {self.what()}"


@dataclass(frozen=True)
class ModelSpec:
    """A model of this package: its own args, the lmms-eval wrapper it subclasses (its args are the model's
    too), whether it passes the other args to an ``inner`` model, and rules that tie args together."""

    args: tuple[Arg, ...]
    wrapper: str | None = None
    wraps_inner: bool = False
    together: Callable[[dict], str | None] | None = None
    note: str = ""

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)


def _layers(value) -> bool:
    text = str(int(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
    text = text.strip()
    return text in ("all", "last") or all(x.strip().lstrip("-").isdigit() for x in text.split(";"))


def _even_factor(value) -> bool:
    return isinstance(value, int) and value % 2 == 0


_PIXELS = dict(kind="int", low=1, rule="a number of pixels, an integer >= 1")
QWEN_BUDGET = (Arg("frame_min_pixels", **_PIXELS), Arg("frame_max_pixels", **_PIXELS),
               Arg("video_total_pixels", **_PIXELS))
VIDEO_BUDGET = (*QWEN_BUDGET, Arg("pixel_factor", kind="int", low=14, check=_even_factor,
                                  rule="the vision encoder's patch size x merge size, an even integer >= 14 (28 for "
                                       "Qwen2.5-VL, 32 for Qwen3-VL)"))


def _budget_order(args: dict) -> str | None:
    lo, hi = _number(args.get("frame_min_pixels"), True), _number(args.get("frame_max_pixels"), True)
    if lo is not None and hi is not None and hi < lo:
        return f"frame_max_pixels={args['frame_max_pixels']} is below frame_min_pixels={args['frame_min_pixels']}"
    return None


def _openai_together(args: dict) -> str | None:
    from ...benchmarks.request_rules import request_fields, rule_for

    model = str(args.get("model") or args.get("model_version") or "grok-2-latest")  # the wrapper's default
    overrides = {k: args.get(k) for k in ("reasoning_effort", "max_completion_tokens", "max_tokens", "thinking")}
    try:  # the provider's rule, as the bridge applies it before its first request
        request_fields(model, 1, 0, overrides, rule_for(model))
    except ValueError as exc:
        return str(exc)
    frames_as = str(args.get("frames_as", "images")).strip().lower()
    budget = [a.name for a in VIDEO_BUDGET if a.name in args]
    if budget and frames_as != "video":
        return f"{', '.join(budget)} size the frames of frames_as=video only (this run sends images)"
    if frames_as == "video" and str(args.get("image_format", "JPEG")).strip().upper() not in ("JPEG", "JPG"):
        return (f"frames_as=video sends a JPEG frame sequence (vLLM's video/jpeg), not "
                f"image_format={args['image_format']}")
    return _budget_order(args)


_PROBE = ModelSpec((Arg("seed", kind="int", rule="an integer"), Arg("record_path"),
                    Arg("delay_s", kind="float", low=0, rule="seconds, a number >= 0")))

SPECS: dict[str, ModelSpec] = {
    "medhorizon_random": _PROBE,
    "medhorizon_needle": _PROBE,
    "medhorizon_resume": ModelSpec((Arg("inner", required=True, rule="the model to run (a name)"),
                                    Arg("journal", required=True, rule="a file path"),
                                    Arg("chunk", kind="int", low=1, rule="requests per call, an integer >= 1"),
                                    Arg("force_simple", kind="bool"), Arg("retry_refused", kind="bool")),
                                   wraps_inner=True),
    "medhorizon_attention": ModelSpec((Arg("inner", required=True, rule="the model to measure (a name)"),
                                       Arg("out", required=True, rule="a file path"),
                                       Arg("layers", check=_layers, rule="all, last, or layer indices such as 0;12;-1")),
                                      wraps_inner=True),
    "medhorizon_qwen2_5_vl": ModelSpec(QWEN_BUDGET, "qwen2_5_vl", together=_budget_order),
    "medhorizon_qwen3_vl": ModelSpec(QWEN_BUDGET, "qwen3_vl", together=_budget_order),
    "medhorizon_internvl3": ModelSpec((Arg("frame_tiles", kind="int", low=1, rule="tiles per frame, an integer >= 1"),),
                                      "internvl3"),
    "medhorizon_internvl3_5": ModelSpec((Arg("frame_tiles", kind="int", low=1,
                                             rule="tiles per frame, an integer >= 1"),), "internvl3_5"),
    "medhorizon_videollama3": ModelSpec((), "videollama3"),
    "medhorizon_llava_onevision": ModelSpec((), "llava_onevision"),
    "medhorizon_llava_vid": ModelSpec((Arg("add_time_instruction", kind="bool"),), "llava_vid"),
    "medhorizon_longva": ModelSpec((Arg("video_decode_backend", kind="choice", choices=("decord",),
                                       rule="decord (the planned frames reach the model through load_video)"),),
                                   "longva"),
    "medhorizon_minicpm_v": ModelSpec((Arg("pretrained"), Arg("max_slice_nums", kind="int", low=1)), "minicpm_v"),
    "medhorizon_videochat_flash": ModelSpec((), "videochat_flash"),
    "medhorizon_hulu_med": ModelSpec((Arg("pretrained"),), "videollama3"),
    "medhorizon_gemma4": ModelSpec((), "gemma4"),
    "medhorizon_molmo2": ModelSpec((Arg("pretrained"),), "gemma4"),
    "medhorizon_gemma3": ModelSpec((), "gemma3"),
    "medhorizon_openai": ModelSpec((
        Arg("image_format", kind="choice", choices=("JPEG", "JPG", "PNG", "WEBP")),
        Arg("image_quality", kind="int", low=1, high=100),
        Arg("image_detail", kind="choice", choices=("low", "high", "auto")),
        Arg("timeout", kind="float", above=0, rule="seconds, a number > 0"),
        Arg("reasoning_effort"), Arg("thinking"),
        Arg("max_completion_tokens", kind="int", low=1), Arg("max_tokens", kind="int", low=1),
        Arg("frames_as", kind="choice", choices=("images", "video")),
        *VIDEO_BUDGET,
        # the wrapper's, which this bridge uses itself
        Arg("max_retries", kind="int", low=1, rule="attempts per request, an integer >= 1"),
        Arg("retry_backoff_s", kind="float", low=0, rule="seconds, a number >= 0"),
        Arg("num_concurrent", kind="int", low=1)), "openai", together=_openai_together),
}


# ------------------------------------------------------------------ reading --model_args

def _split(text: str) -> list[str]:
    """lmms-eval's split of ``--model_args`` (``simple_parse_args_string``): at commas outside quotes,
    braces and brackets."""
    parts, current, depth, quote = [], [], 0, None
    for i, ch in enumerate(text):
        if ch in ("'", '"') and (i == 0 or text[i - 1] != "\\"):
            quote = ch if quote is None else (None if ch == quote else quote)
        elif quote is None and ch in "{[":
            depth += 1
        elif quote is None and ch in "}]":
            depth -= 1
        elif quote is None and ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def parse_model_args(text: str, *, option: str = "--model_args") -> dict[str, str]:
    """``key=value,...`` as lmms-eval reads it, the values as typed; ModelArgsError for a part without ``=``."""
    out: dict[str, str] = {}
    for part in _split((text or "").strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ModelArgsError(f"{option} {text!r}: {part!r} is not key=value")
        out[key.strip()] = value
    return out


# ------------------------------------------------------------------ the check

def accepted_args(model: str) -> list[str] | None:
    """Every arg ``model`` (one of this package's) takes, sorted; None when that cannot be known here (not one
    of this package's models, or its lmms-eval wrapper's source cannot be read)."""
    from .installed import wrapper_arg_names

    spec = SPECS.get(model)
    if spec is None:
        return None
    names = {a.name for a in spec.args} | set(EVALUATOR_ARGS)
    if spec.wrapper is not None:
        inherited = wrapper_arg_names(spec.wrapper)
        if inherited is None:
            return None
        names |= inherited
    return sorted(names)


def model_args_problem(model: str, args: dict, *, option: str = "--model_args") -> str | None:
    """One line saying what is wrong with ``args`` (a name to value dict, values as typed or as lmms-eval
    converted them) for ``model``: an arg it does not take (with the args it takes), a value it cannot be; None
    when nothing is, or when ``model`` is another package's (its own wrapper judges)."""
    from .installed import closest, unknown_model_problem

    spec = SPECS.get(model)
    if spec is None:
        return None
    own = {a.name for a in spec.args}
    for arg in spec.args:
        if arg.required and str(args.get(arg.name, "") or "").strip() == "":
            return f"{option}: {model} needs {arg.name}=<{arg.what()}>"
    for name, value in args.items():
        arg = spec.arg(name)
        if arg is not None:
            why = arg.problem(value)
            if why:
                return f"{option} {name}={value}: {model}'s {name} must be {arg.what()}"
    if spec.together is not None:
        why = spec.together(args)
        if why:
            return f"{option}: {model}: {why}"
    if spec.wraps_inner:
        inner = str(args["inner"]).strip()
        unknown = unknown_model_problem(inner, label=f"{option} inner={inner}")
        if unknown:
            return unknown
        if inner in ("medhorizon_resume", "medhorizon_attention"):
            return f"{option} inner={inner}: {model} cannot wrap {inner}"
        rest = {k: v for k, v in args.items() if k not in own}
        return model_args_problem(inner, rest, option=option)
    accepted = accepted_args(model)
    if accepted is None:
        return None
    for name in args:
        if name not in accepted:
            near = closest(name, accepted)
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            return f"{option} {name}: {model} takes no arg {name!r}{hint}; it takes {', '.join(accepted)}"
    return None


def refuse_bad_model_args(model: str, args: dict, *, option: str = "--model_args") -> None:
    """:func:`model_args_problem` as a ModelArgsError."""
    problem = model_args_problem(model, args, option=option)
    if problem:
        raise ModelArgsError(problem)


def _name_of(cls) -> str | None:
    from .bridges.manifest import BRIDGES
    from .ours import PROBES

    path = f"{cls.__module__}.{cls.__qualname__}"
    for name, target in [*PROBES.items(), *((n, p) for n, (p, _) in BRIDGES.items())]:
        if target == path:
            return name
    return None


class CheckedModelArgs:
    """Mixin placed before lmms-eval's ``lmms`` (or wrapper) in this package's models: lmms-eval creates a model
    from ``--model_args`` through ``create_from_arg_string``, which checks them first
    (:func:`model_args_problem`) under the model's registered name. A subclass registered under no name (a
    test's) is not checked."""

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
        name = _name_of(cls)
        if name is not None:
            refuse_bad_model_args(name, parse_model_args(arg_string))
        return super().create_from_arg_string(arg_string, additional_config)

