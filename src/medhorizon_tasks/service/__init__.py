"""The leaderboard submission service (``medhorizon-tasks leaderboard serve``).

A web application (:mod:`.app`, FastAPI served by uvicorn) over one store of submissions (:mod:`.store`:
SQLite by default, PostgreSQL when shared). It receives submissions through an HTML form and a JSON API,
checks them as ``leaderboard validate`` does (:mod:`.intake`), keeps the accepted ones, and serves the boards
that ``leaderboard build`` would make of them (:mod:`.boards`, through ``leaderboard/``'s one scoring path),
as pages (:mod:`.pages`), JSON and CSV. What protects it from the internet is in :mod:`.security`.
Hosting it: docs/hosting.md.
"""
