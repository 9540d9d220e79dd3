"""The service's routes, one router per audience: :mod:`.board` (anyone reading the boards),
:mod:`.submissions` (anyone sending a run), :mod:`.maintainers` (the board's maintainers, with their token)."""

from . import board, maintainers, submissions

ROUTERS = (board.router, submissions.router, maintainers.router)

__all__ = ["ROUTERS"]
