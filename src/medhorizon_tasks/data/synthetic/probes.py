"""Pipeline probes: two "models" that test the evaluation pipeline, not medicine.

- :func:`random_answer`: a seeded uniform guess among the options in the prompt (for an ordering
  prompt, a uniformly random order of its events).
- :func:`needle_answer`: reads the synthetic benchmark's visual code
  (:mod:`medhorizon_tasks.data.synthetic.visual_code`) from the frames it is given and
  answers the question whose probe tag is in the prompt, in varied free-form
  styles (so answer extraction is exercised too); with no evidence frame among
  its inputs it refuses. For order items (``[probe #N first-seen]``) it answers
  with the first code it sees in the order the frames were given, so frame
  order perturbations break exactly those items. For SurgHiBench prompts (closed "Phases" and
  "Steps" lists) it reads the code seen most often in its window as ``phase_index << 5 |
  step_index`` into those lists and answers JSON in varied styles. On the synthetic benchmark it therefore scores ~100%
  with oracle frames and exactly as well as the frame sampler finds the
  evidence otherwise. It knows nothing about clinical video.

Both are deterministic functions of their inputs, so runs are reproducible
across processes and machines.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np

from .visual_code import decode_code

_TAG = re.compile(r"\[probe #(\d+)( first-seen| events)?\]")
_EVENTS = re.compile(r"(?:^Events: |\(actions: )(.+?)(?:\.$|\))", re.MULTILINE)
_OPTION = re.compile(r"^([A-Z])\.\s+(.*\S)\s*$", re.MULTILINE)

REFUSAL = "I cannot determine the answer: none of the frames I was given shows the relevant evidence."

# Free-form answer styles; {L} = letter, {l} = lower-case letter, {T} = option text, {X} = another letter.
STYLES = (
    "{L}",
    "The answer is {L}.",
    "Answer: ({l})",
    "**{L}**",
    "\\boxed{{{L}}}",
    '{{"answer": "{L}"}}',
    "<think>Option {X} looked plausible at first, but the evidence frames point elsewhere.</think>\nFinal answer: {L}",
    "After a careful look at the frames, a clear view of the relevant moment appears, so the correct option is {L}.",
    "答案是{L}",
    "{T}",
    "Option {X} is not supported by the frames. The answer is {L}.",
    "{L}. {T}",
)


def image_digest(image) -> str:
    """SHA-256 of an image's RGB pixels and size: what a probe model was shown, comparable across PIL images,
    image files and arrays (the probes of both frameworks record it; tests compare it with the plan)."""
    import numpy as np

    arr = np.asarray(image.convert("RGB") if hasattr(image, "convert") else image, dtype=np.uint8)
    arr = np.ascontiguousarray(arr)
    return hashlib.sha256(repr(arr.shape).encode() + arr.tobytes()).hexdigest()


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


def options_in(prompt: str) -> list[tuple[str, str]]:
    """The ``(letter, text)`` options listed in a prompt, in order."""
    return _OPTION.findall(prompt)


_LABEL_LIST = re.compile(r"^(Phases|Steps) \(choose exactly one\):\n((?:- .*\n?)+)", re.MULTILINE)


def label_lists(prompt: str) -> tuple[list[str], list[str]] | None:
    """The closed phase and step lists of a SurgHiBench prompt, or ``None`` for other prompts."""
    found = {m.group(1): [x[2:].strip() for x in m.group(2).splitlines() if x.startswith("- ")]
             for m in _LABEL_LIST.finditer(prompt)}
    if "Phases" not in found or "Steps" not in found:
        return None
    return found["Phases"], found["Steps"]


# Answer styles for phase/step prompts: the parser must read every one of them.
PHASE_STEP_STYLES = (
    '{{"phase": "{p}", "step": "{s}"}}',
    '```json\n{{\n  "phase": "{P}",\n  "step": "{S}"\n}}\n```',
    "{{'phase': '{p_}', 'step': '{s_}'}}",
    "Phase: {P}\nStep: {S}",
    'The frame shows the {s} step.\n{{"step": "{S}", "phase": "{p}",}}',
    '<think>{{"phase": "unsure"}}</think>{{"Phase": "{p}", "Step": "{s}"}}',
)


def _phase_step_answer(images: Iterable, lists: tuple[list[str], list[str]], seed: int, prompt: str) -> str:
    phases, steps = lists
    codes = [(tag << 2) | idx for tag, idx in read_codes(images)]
    codes = [c for c in codes if (c >> 5) < len(phases) and (c & 31) < len(steps)]
    if not codes:
        return REFUSAL
    code = Counter(codes).most_common(1)[0][0]
    p, s = phases[code >> 5], steps[code & 31]
    style = PHASE_STEP_STYLES[_h(seed, "phase-step", prompt) % len(PHASE_STEP_STYLES)]
    return style.format(p=p, s=s, P=p.title(), S=s.title(), p_=p.replace(" ", "_"), s_=s.replace(" ", "_"))


def events_in(prompt: str) -> list[str]:
    """The events listed in a Sureon ordering prompt (``Events: a; b; c.``), in the listed order; [] otherwise."""
    m = _EVENTS.search(prompt)
    return [x.strip() for x in m.group(1).split(";")] if m else []


def random_answer(prompt: str, seed: int = 0) -> str:
    """A seeded uniform guess: a letter among the listed options; for an ordering prompt without options
    (Sureon's TO: "Events: a; b; c.") the listed events in a uniformly random order, so it is right with
    probability 1/3! = 1/6 (the paper's Random row, 16.7); a phase and a step for SurgHiBench prompts."""
    lists = label_lists(prompt)
    if lists is not None:
        phases, steps = lists
        return json.dumps({"phase": phases[_h(seed, "p", prompt) % len(phases)],
                           "step": steps[_h(seed, "s", prompt) % len(steps)]})
    options = options_in(prompt)
    events = events_in(prompt)
    if events and not options:
        order = np.random.default_rng(_h(seed, "order", prompt)).permutation(len(events))
        return " > ".join(events[i] for i in order)
    letters = [L for L, _ in options] or ["A", "B", "C", "D"]
    return letters[_h(seed, prompt) % len(letters)]


def read_codes(images: Iterable) -> list[tuple[int, int]]:
    """Every synthetic code found in the images (each a PIL image or an HxWx3 array)."""
    found = []
    for img in images:
        code = decode_code(img)
        if code is not None:
            found.append(code)
    return found


def _order_answer(codes: list[tuple[int, int]], tag: int, prompt: str, seed: int) -> str:
    """Sureon-style order items: the listed events, in the order their codes first appear."""
    labels = events_in(prompt)
    order = list(dict.fromkeys(idx for t, idx in codes if t == tag and idx < len(labels)))
    if len(order) < len(labels) or not labels:
        return REFUSAL
    names = [labels[i] for i in order]
    if _h(seed, "order", prompt) % 2:
        return " > ".join(names)
    return f"First {names[0]}, " + "".join(f"then {x}, " for x in names[1:-1]) + f"finally {names[-1]}."


def needle_answer(images: Iterable, prompt: str, seed: int = 0) -> str:
    lists = label_lists(prompt)
    if lists is not None:
        return _phase_step_answer(images, lists, seed, prompt)
    m = _TAG.search(prompt)
    if m is not None and m.group(2) == " events":
        return _order_answer(read_codes(images), int(m.group(1)), prompt, seed)
    options = options_in(prompt)
    if m is None or not options:
        return REFUSAL
    tag, first_seen = int(m.group(1)), m.group(2) == " first-seen"
    seen = [idx for t, idx in read_codes(images) if t == tag and idx < len(options)]
    if not seen:
        return REFUSAL
    idx = seen[0] if first_seen else Counter(seen).most_common(1)[0][0]
    letter, text = options[idx]
    other = options[(idx + 1 + _h(seed, "x", prompt) % (len(options) - 1)) % len(options)][0]
    style = STYLES[_h(seed, "style", prompt) % len(STYLES)]
    return style.format(L=letter, l=letter.lower(), T=text, X=other)
