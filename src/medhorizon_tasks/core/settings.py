"""Settings read from the environment: every ``MEDHORIZON_*`` variable the package reads is parsed here.

One helper per kind of value, each refusing what it cannot take with one line
that names the variable, the value and what is accepted
(:class:`SettingError`), instead of a traceback (``MEDHORIZON_PLAN_STORE_MB=inf``
was an ``OverflowError``) or a silent other meaning (a negative store size
turned the store off):

* :func:`env_number`: a finite number within bounds (megabytes, counts);
* :func:`env_flag`: yes/no (``1 true yes on`` / ``0 false no off``, any case; unset or empty is the default);
* :func:`env_text` and :func:`env_path`: free text and a path (``~`` expanded), None when unset or blank.

``environ`` (default ``os.environ``) lets a caller or a test hand another mapping.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

from .errors import MedHorizonError

__all__ = ["SettingError", "env_number", "env_flag", "env_text", "env_path", "TRUE_WORDS", "FALSE_WORDS"]

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


class SettingError(MedHorizonError, ValueError):
    """An environment variable whose value is not one its setting accepts."""

    def __init__(self, name: str, value: str, accepts: str):
        self.name, self.value, self.accepts = name, value, accepts
        super().__init__(f"${name}={value!r} is not a setting it accepts: expected {accepts}")


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    env = os.environ if environ is None else environ
    value = env.get(name)
    return None if value is None or not str(value).strip() else str(value).strip()


def env_text(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's text, white space trimmed; None when it is unset or blank."""
    return _raw(name, environ)


def env_path(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The variable as a path (``~`` expanded); None when it is unset or blank."""
    value = _raw(name, environ)
    return None if value is None else Path(value).expanduser()


def env_flag(name: str, default: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """The variable as yes/no; ``default`` when it is unset or blank; any other word is refused."""
    value = _raw(name, environ)
    if value is None:
        return default
    word = value.lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise SettingError(name, value, f"yes or no ({', '.join(TRUE_WORDS)} / {', '.join(FALSE_WORDS)})")


def env_number(name: str, default: float | int | None, *, minimum: float = 0, maximum: float | None = None,
               integer: bool = False, what: str = "a number", environ: Mapping[str, str] | None = None):
    """The variable as a finite number from ``minimum`` to ``maximum`` (a whole number with ``integer``);
    ``default`` when it is unset or blank. ``what`` says what the number counts (``"megabytes"``), for the
    message. ``inf``, ``nan``, a negative number below ``minimum`` and words are refused, never clamped."""
    value = _raw(name, environ)
    if value is None:
        return default
    bounds = f"from {minimum:g}" + (f" to {maximum:g}" if maximum is not None else "")
    accepts = f"{'a whole number' if integer else 'a finite number'} of {what} {bounds}"
    try:
        number = float(value)
    except ValueError:
        raise SettingError(name, value, accepts) from None
    if not math.isfinite(number) or number < minimum or (maximum is not None and number > maximum):
        raise SettingError(name, value, accepts)
    if integer:
        if number != int(number):
            raise SettingError(name, value, accepts)
        return int(number)
    return number
