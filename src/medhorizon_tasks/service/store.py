"""The store of submissions: one small interface over a real database, SQLite (default) or PostgreSQL.

Everything the service knows lives here, so the board is always rebuilt from it:

* ``submissions``: one row per accepted submission: the bytes **as received**
  (``received``) with their SHA-256 (unique: the same bytes twice are one
  entry), the submission JSON that is scored (``submission``: the same bytes
  for a submission upload; made by ``leaderboard make`` from an uploaded samples
  or predictions file and the form's fields otherwise), who sent it, when, and
  its state (``public`` or ``hidden``).
* ``actions``: every maintainer action (hide, restore, delete, verify, unverify) with its reason;
  a deleted submission's row goes, its action (with the hash, model and content key) stays, so the same run
  sent again is refused, saying so (:class:`DeletedBefore`), until a maintainer restores it (a ``restore``
  of the deleted id, which brings back no bytes: the run may then be sent again).
* content keys: ``submissions.content_key`` (unique) is the hash of a run's content
  (:func:`~..leaderboard.submission.content_key`): the same run sent again with other white space, or as
  its samples and as its submission JSON, is the entry already kept. Added beside ``sha256`` in place to an
  older store (its old rows have none).
* the *verified* mark (the maintainers reproduced an entry): an entry is verified when its last
  verify/unverify action is a verify; the mark is read from the action log (:meth:`Store.verified`), so it has
  its reason and time, and needs no column of its own.
* ``submitters``: submitter tokens, kept as SHA-256 hashes only.
* ``meta``: the schema version. A store written by a newer version of the
  package is refused with a clear message, never read half-understood.

Each write is one transaction: a server killed (SIGKILL) during a submission
restarts with the whole submission or none of it. SQLite runs in WAL mode with
``synchronous=FULL`` (a committed submission survives a crash of the machine
too); a full disk (or ``max_mb``, SQLite's ``max_page_count``) is
:class:`StoreFull`, and the store goes on working for reads and smaller writes.

SQLAlchemy Core is the one layer under both databases (psycopg 3 is its
PostgreSQL driver): the same statements, the same transactions.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from ..core.errors import MedHorizonError

__all__ = ["SCHEMA_VERSION", "Store", "StoredSubmission", "Action", "MARKS", "StoreError", "StoreFull", "NewerSchema",
           "DeletedBefore",
           "default_db_url", "open_store"]

SCHEMA_VERSION = 1

_md = sa.MetaData()
_meta = sa.Table("mh_meta", _md, sa.Column("key", sa.String(64), primary_key=True),
                 sa.Column("value", sa.Text, nullable=False))
_subs = sa.Table(
    "mh_submissions", _md,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("received_at", sa.String(32), nullable=False),
    sa.Column("benchmark", sa.String(32), nullable=False),
    sa.Column("data_version", sa.String(64), nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),          # submission | samples (what was received)
    sa.Column("filename", sa.Text),                            # as the client named it; shown escaped, never a path
    sa.Column("submitter", sa.Text),                           # a submitter token's name, or the client's address
    sa.Column("state", sa.String(16), nullable=False),         # public | hidden
    # leaderboard.submission.content_key: benchmark, data version, protocol, items and outputs, whatever the
    # bytes or the upload kind (unique: one run is one entry); NULL for rows kept before it was recorded
    sa.Column("content_key", sa.String(64), unique=True),
    # the bytes last: listing the submissions (every board request) then reads no page of them (SQLite walks a
    # row's columns in order, through a large value's overflow pages)
    sa.Column("received", sa.LargeBinary, nullable=False),     # the bytes as received
    sa.Column("submission", sa.LargeBinary),                   # the scored submission JSON; NULL = ``received``
    # SQLite's AUTOINCREMENT: a deleted entry's id is never given to another (the action log names ids)
    sqlite_autoincrement=True,
)
_actions = sa.Table(
    "mh_actions", _md,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("submission_id", sa.Integer, nullable=False),    # not a foreign key: a deletion's record outlives it
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("at", sa.String(32), nullable=False),
    sa.Column("content_key", sa.String(64)),                   # the run's content key: a deletion is remembered
)
_submitters = sa.Table(
    "mh_submitters", _md,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.String(32), nullable=False),
)

#: Ids past this are no row of the store, on either database (PostgreSQL's INTEGER is 32 bits; SQLite's 64):
#: asked for, they are "not found", never handed to the database to overflow.
MAX_ID = 2 ** 31 - 1

STATES = ("public", "hidden")
ACTIONS = {"hide": "hidden", "restore": "public", "delete": None}
MARKS = ("verify", "unverify")  # actions that leave the state as it is: they set or clear the verified mark


class StoreError(MedHorizonError):
    """The store cannot be opened or used (a bad URL, an unreachable server, a newer schema)."""


class NewerSchema(StoreError):
    """The store was written by a newer version of the package."""


class StoreFull(StoreError):
    """The database's disk (or its configured size) is full: nothing was written."""


class DeletedBefore(StoreError):
    """The same run (content key) was kept before and deleted by a maintainer, who has not restored it."""

    def __init__(self, action: "Action"):
        self.action = action
        super().__init__(f"this run was entry {action.submission_id}, deleted by the board's maintainer on "
                         f"{action.at} (reason: {action.reason}); it is not accepted again unless a maintainer "
                         f"restores it (POST /api/submissions/{action.submission_id}/restore)")


@dataclass(frozen=True)
class StoredSubmission:
    id: int
    sha256: str
    received_at: str
    benchmark: str
    data_version: str
    model: str
    kind: str
    filename: str | None
    submitter: str | None
    state: str
    content_key: str | None = None


@dataclass(frozen=True)
class Action:
    id: int
    submission_id: int
    sha256: str
    model: str
    action: str
    reason: str
    at: str
    content_key: str | None = None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def default_db_url() -> str:
    """``sqlite:///`` of ``leaderboard.sqlite3`` in the user's data folder (``$XDG_DATA_HOME`` or
    ``~/.local/share``, then ``medhorizon-tasks``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return f"sqlite:///{Path(base) / 'medhorizon-tasks' / 'leaderboard.sqlite3'}"


def _is_full(exc: BaseException) -> bool:
    """A write refused because the disk (or the configured size) is full, on SQLite or PostgreSQL."""
    orig = getattr(exc, "orig", exc)
    import sqlite3

    if isinstance(orig, sqlite3.Error) and getattr(orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return True
    return getattr(orig, "sqlstate", None) in ("53100",)  # PostgreSQL: disk_full


def _first_line(exc: sa_exc.DBAPIError) -> str:
    return (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]


def _id_in_range(sub_id: int) -> bool:
    return isinstance(sub_id, int) and 1 <= sub_id <= MAX_ID


_COLUMNS = [c.name for c in _subs.c if c.name not in ("received", "submission")]


class Store:
    """The submissions, actions and submitter tokens of one service, in one database (see the module's text)."""

    def __init__(self, url: str, *, max_mb: float | None = None):
        self.url = url
        try:
            u = sa.engine.make_url(url)
        except sa_exc.ArgumentError:
            raise StoreError(f"--db {url!r}: not a database URL (expected sqlite:///PATH or "
                             "postgresql://USER@HOST:PORT/NAME)") from None
        self.dialect = u.get_backend_name()
        if self.dialect == "sqlite":
            if not u.database or u.database == ":memory:":
                raise StoreError(f"--db {url!r}: give the database file, sqlite:///PATH")
            uri = u.database.startswith("file:")  # sqlite:///file:PATH?mode=ro&uri=true: SQLite's own URI
            try:
                if not uri:
                    Path(u.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"--db {url!r}: cannot make the store's folder ({exc.strerror or exc})") from None
            self.engine = sa.create_engine(u if uri else u.set(database=str(Path(u.database).expanduser())),
                                           connect_args={"timeout": 30, "check_same_thread": False})
            sa.event.listen(self.engine, "connect", lambda con, _rec: self._sqlite_setup(con, max_mb))
        elif self.dialect == "postgresql":
            self.engine = sa.create_engine(u.set(drivername="postgresql+psycopg"), pool_pre_ping=True)
        else:
            raise StoreError(f"--db {url!r}: {self.dialect} is not supported; use sqlite:///PATH or postgresql://...")
        self._open()

    @staticmethod
    def _sqlite_setup(con, max_mb: float | None) -> None:
        cur = con.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA busy_timeout=30000")
        if max_mb is not None:
            page = cur.execute("PRAGMA page_size").fetchone()[0]
            cur.execute(f"PRAGMA max_page_count={max(1, int(max_mb * 2 ** 20 // page))}")
        cur.close()

    def _open(self) -> None:
        try:
            with self.engine.begin() as con:
                _md.create_all(con, checkfirst=True)
                self._add_content_keys(con)
                row = con.execute(sa.select(_meta.c.value).where(_meta.c.key == "schema_version")).first()
                if row is None:
                    con.execute(_meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
                    stored = SCHEMA_VERSION
                else:
                    stored = int(row[0])
        except sa_exc.IntegrityError:  # another process created it at the same moment
            return self._open()
        except sa_exc.DBAPIError as exc:
            raise StoreError(f"--db {self.safe_url}: cannot open the store: {_first_line(exc)}") from None
        try:  # a store that reads but cannot be written (a read-only disk or user) would fail every submission
            with self.engine.begin() as con:
                con.execute(_meta.update().where(_meta.c.key == "schema_version").values(value=_meta.c.value))
        except sa_exc.DBAPIError as exc:
            raise StoreError(f"--db {self.safe_url}: the store cannot be written ({_first_line(exc)}): give a "
                             "store on a writable disk, with a database user that may write") from None
        if stored > SCHEMA_VERSION:
            raise NewerSchema(f"--db {self.safe_url}: the store was written by a newer medhorizon-tasks (schema "
                              f"version {stored}; this version reads up to {SCHEMA_VERSION}): upgrade "
                              "medhorizon-tasks, or give another --db")

    @staticmethod
    def _add_content_keys(con) -> None:
        """A store made before content keys were kept gets their columns (its old rows have none: NULL)."""
        inspector = sa.inspect(con)
        for table, unique in (("mh_submissions", True), ("mh_actions", False)):
            if "content_key" in {c["name"] for c in inspector.get_columns(table)}:
                continue
            con.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN content_key VARCHAR(64)"))
            if unique:
                con.execute(sa.text(f"CREATE UNIQUE INDEX ix_{table}_content_key ON {table} (content_key)"))

    @property
    def safe_url(self) -> str:
        """The URL without its password, for messages and logs."""
        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    # -------------------------------------------------------------- submissions

    def add(self, *, received: bytes, submission: bytes | None, benchmark: str, data_version: str, model: str,
            kind: str, filename: str | None, submitter: str | None,
            content_key: str | None = None) -> tuple[StoredSubmission, bool]:
        """Keep one accepted submission (one transaction). Returns ``(row, True)``, or ``(the row already
        holding these bytes or this content, False)``; :class:`DeletedBefore` when a maintainer deleted the
        same content and has not restored it; :class:`StoreFull` when the disk is full (nothing written)."""
        sha = hashlib.sha256(received).hexdigest()
        existing = self._existing(sha, content_key)
        if existing is not None:
            return existing, False
        deleted = self.deleted(content_key) if content_key else None
        if deleted is not None:
            raise DeletedBefore(deleted)
        values = dict(sha256=sha, received_at=_now(), benchmark=benchmark, data_version=data_version, model=model,
                      kind=kind, filename=filename, submitter=submitter, received=received,
                      submission=None if submission == received else submission, state="public",
                      content_key=content_key)
        try:
            with self.engine.begin() as con:
                new_id = con.execute(_subs.insert().values(**values).returning(_subs.c.id)).scalar_one()
        except sa_exc.IntegrityError:
            existing = self._existing(sha, content_key)  # the same run, sent at the same moment by another request
            if existing is None:
                raise
            return existing, False
        except sa_exc.OperationalError as exc:
            if _is_full(exc):
                raise StoreFull("the server's store is full: the submission was not kept (nothing was written); "
                                "try again later, and tell the board's maintainer") from None
            raise
        return self.get(new_id), True

    def _rows(self, where=None) -> list[StoredSubmission]:
        q = sa.select(*[_subs.c[c] for c in _COLUMNS]).order_by(_subs.c.id)
        if where is not None:
            q = q.where(where)
        with self.engine.connect() as con:
            return [StoredSubmission(*r) for r in con.execute(q)]

    def list(self, *, include_hidden: bool = False) -> list[StoredSubmission]:
        """Every submission (public ones only unless ``include_hidden``), oldest first, without their bytes."""
        return self._rows(None if include_hidden else _subs.c.state == "public")

    def get(self, sub_id: int) -> StoredSubmission | None:
        if not _id_in_range(sub_id):
            return None
        rows = self._rows(_subs.c.id == sub_id)
        return rows[0] if rows else None

    def by_sha256(self, sha: str) -> StoredSubmission | None:
        rows = self._rows(_subs.c.sha256 == sha)
        return rows[0] if rows else None

    def by_content_key(self, key: str) -> StoredSubmission | None:
        rows = self._rows(_subs.c.content_key == key)
        return rows[0] if rows else None

    def _existing(self, sha: str, content_key: str | None) -> StoredSubmission | None:
        return self.by_sha256(sha) or (self.by_content_key(content_key) if content_key else None)

    def deleted(self, content_key: str) -> Action | None:
        """The deletion of the run with this content key, when the last action on it was one (a maintainer's
        restore after it lets the run be sent again)."""
        q = sa.select(*_actions.c).where(_actions.c.content_key == content_key).order_by(_actions.c.id.desc())
        with self.engine.connect() as con:
            row = con.execute(q.limit(1)).first()
        return Action(*row) if row is not None and row.action == "delete" else None

    def submission_bytes(self, sub_id: int) -> bytes:
        """The scored submission JSON of ``sub_id`` (the bytes as received for a submission upload)."""
        if not _id_in_range(sub_id):
            raise KeyError(sub_id)
        with self.engine.connect() as con:
            row = con.execute(sa.select(_subs.c.submission, _subs.c.received).where(_subs.c.id == sub_id)).first()
        if row is None:
            raise KeyError(sub_id)
        return bytes(row[0] if row[0] is not None else row[1])

    def received_bytes(self, sub_id: int) -> bytes:
        if not _id_in_range(sub_id):
            raise KeyError(sub_id)
        with self.engine.connect() as con:
            row = con.execute(sa.select(_subs.c.received).where(_subs.c.id == sub_id)).first()
        if row is None:
            raise KeyError(sub_id)
        return bytes(row[0])

    # -------------------------------------------------------------- maintainer actions

    def act(self, sub_id: int, action: str, reason: str) -> Action:
        """Hide, restore, delete, verify or unverify ``sub_id``, keeping the action and its reason (one
        transaction)."""
        if action not in ACTIONS and action not in MARKS:
            raise ValueError(f"unknown action {action!r}")
        if not _id_in_range(sub_id):
            raise KeyError(sub_id)
        with self.engine.begin() as con:
            row = con.execute(sa.select(_subs.c.sha256, _subs.c.model, _subs.c.content_key)
                              .where(_subs.c.id == sub_id).with_for_update()).first()
            if row is None:
                # a deleted entry: "restore" lets its run be sent again (its bytes are gone with its row)
                last = con.execute(sa.select(_actions.c.sha256, _actions.c.model, _actions.c.content_key,
                                             _actions.c.action).where(_actions.c.submission_id == sub_id)
                                   .order_by(_actions.c.id.desc()).limit(1)).first()
                if action != "restore" or last is None or last[3] != "delete":
                    raise KeyError(sub_id)
                row = last
            elif action in MARKS:
                pass
            elif ACTIONS[action] is None:
                con.execute(_subs.delete().where(_subs.c.id == sub_id))
            else:
                con.execute(_subs.update().where(_subs.c.id == sub_id).values(state=ACTIONS[action]))
            values = dict(submission_id=sub_id, sha256=row[0], model=row[1], action=action, reason=reason, at=_now(),
                          content_key=row[2])
            new_id = con.execute(_actions.insert().values(**values).returning(_actions.c.id)).scalar_one()
        return Action(new_id, **values)

    def actions(self, sub_id: int | None = None) -> list[Action]:
        q = sa.select(*_actions.c).order_by(_actions.c.id)
        if sub_id is not None:
            q = q.where(_actions.c.submission_id == sub_id)
        with self.engine.connect() as con:
            return [Action(*r) for r in con.execute(q)]

    def verified(self) -> dict[int, Action]:
        """The verified entries: id -> the verify action that marks it (its reason and time), for each entry
        whose last verify/unverify action is a verify."""
        q = (sa.select(*_actions.c).where(_actions.c.action.in_(MARKS)).order_by(_actions.c.id))
        last: dict[int, Action] = {}
        with self.engine.connect() as con:
            for r in con.execute(q):
                last[r[1]] = Action(*r)
        return {k: a for k, a in last.items() if a.action == "verify"}

    # -------------------------------------------------------------- submitter tokens

    def add_submitter(self, name: str) -> str:
        """A new submitter token for ``name`` (returned once; only its hash is kept)."""
        import secrets

        token = secrets.token_urlsafe(32)
        with self.engine.begin() as con:
            con.execute(_submitters.insert().values(name=name, token_sha256=hashlib.sha256(token.encode()).hexdigest(),
                                                    created_at=_now()))
        return token

    def submitter_of(self, token: str) -> str | None:
        """The name of the submitter whose token this is, or None (looked up by the token's hash)."""
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        with self.engine.connect() as con:
            row = con.execute(sa.select(_submitters.c.name).where(_submitters.c.token_sha256 == digest)).first()
        return row[0] if row else None


def open_store(url: str | None = None, *, max_mb: float | None = None) -> Store:
    """The store at ``url`` (default :func:`default_db_url`), created on first use."""
    return Store(url or default_db_url(), max_mb=max_mb)
