"""Errors a user can act on: each names the item (uid or line) and the field."""

from __future__ import annotations


class MedHorizonError(Exception):
    """Base class of every error this package reports to a user."""


class DataError(MedHorizonError, ValueError):
    """Bad input data. ``problems`` lists every problem found, one line each."""

    def __init__(self, problems: list[str] | str, *, source: str | None = None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        shown = self.problems[:20]
        more = len(self.problems) - len(shown)
        text = head + ("; ".join(shown) if len(shown) == 1 else
                       f"{len(self.problems)} problem(s):\n  - " + "\n  - ".join(shown))
        if more > 0:
            text += f"\n  ... and {more} more"
        super().__init__(text)


class VideoError(MedHorizonError):
    """A video that is missing, unreadable, truncated, or outside the video root."""

    def __init__(self, message: str, *, path: str | None = None, uid: str | None = None):
        self.path = path
        self.uid = uid
        where = f"item {uid}: " if uid is not None else ""
        super().__init__(f"{where}{message}" + (f" (video: {path})" if path else ""))
