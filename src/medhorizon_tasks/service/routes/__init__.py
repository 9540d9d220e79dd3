"""The service's routes, one router per audience: :mod:`.board` (anyone reading the boards),
:mod:`.submissions` (anyone sending a run), :mod:`.maintainers` (the board's maintainers, with their token), :mod:`.maintainer_view`
(the same in HTML, after a login)."""

from . import board, maintainer_view, maintainers, submissions

ROUTERS = (board.router, submissions.router, maintainers.router, maintainer_view.router)

__all__ = ["ROUTERS"]
