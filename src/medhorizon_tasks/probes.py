"""Pipeline probes: two "models" that test the evaluation pipeline, not medicine.

- :func:`random_answer`: a seeded uniform guess among the options in the prompt.
- :func:`needle_answer`: reads the synthetic benchmark's visual code
  (:mod:`medhorizon_tasks.data.visual_code`) from the frames it is given and
  answers the question whose probe tag is in the prompt, in varied free-form
  styles (so answer extraction is exercised too); with no evidence frame among
  its inputs it refuses. For order items (``[probe #N first-seen]``) it answers
  with the first code it sees in the order the frames were given, so frame
  order perturbations break exactly those items. On the synthetic benchmark it therefore scores ~100%
  with oracle frames and exactly as well as the frame sampler finds the
  evidence otherwise. It knows nothing about clinical video.

Both are deterministic functions of their inputs, so runs are reproducible
across processes and machines.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

from .data.visual_code import decode_code

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


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


def options_in(prompt: str) -> list[tuple[str, str]]:
    """The ``(letter, text)`` options listed in a prompt, in order."""
    return _OPTION.findall(prompt)


def random_answer(prompt: str, seed: int = 0) -> str:
    letters = [L for L, _ in options_in(prompt)] or ["A", "B", "C", "D"]
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
    m = _EVENTS.search(prompt)
    labels = [x.strip() for x in m.group(1).split(";")] if m else []
    order = list(dict.fromkeys(idx for t, idx in codes if t == tag and idx < len(labels)))
    if len(order) < len(labels) or not labels:
        return REFUSAL
    names = [labels[i] for i in order]
    if _h(seed, "order", prompt) % 2:
        return " > ".join(names)
    return f"First {names[0]}, " + "".join(f"then {x}, " for x in names[1:-1]) + f"finally {names[-1]}."


def needle_answer(images: Iterable, prompt: str, seed: int = 0) -> str:
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
