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
  package is refused with a clear message, never read half-understood. And the
  store's **generation**: a counter bumped in the same transaction as every write
  that changes a board (a submission kept, hidden, restored, deleted, a score
  kept), read at each request, so a process's memos follow writes made by any
  other process on the same store (``serve --workers N``, replicas).
* ``scores`` (private, never served): each submission's scored entry (JSON) and its
  per-item correctness (bits), kept at acceptance in the submission's own
  transaction under the scorer's key (:data:`~..leaderboard.build.SCORER_VERSION`,
  resampling settings), deleted with the submission: a restarted service reads
  its first board from them instead of scoring every submission again.
* ``rate_events``: the rate limit's counts (accepted submissions, attempts) per
  submitter, in the store so that every process shares one limit.

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
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from ..core.errors import MedHorizonError

__all__ = ["SCHEMA_VERSION", "Store", "StoredSubmission", "StoredScore", "Action", "Rate", "MARKS", "StoreError",
           "StoreFull", "OverRate", "NewerSchema", "DeletedBefore", "default_db_url", "open_store"]

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

# Added after schema version 1 (created on open by create_all; a store without them is upgraded in place, and a
# version that does not know them ignores them).
_scores = sa.Table(
    "mh_scores", _md,
    sa.Column("submission_id", sa.Integer, sa.ForeignKey("mh_submissions.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("scorer", sa.String(200), nullable=False),        # the scorer's key: version + resampling settings
    sa.Column("data_version", sa.String(64), nullable=False),
    sa.Column("entry", sa.Text, nullable=False),                # the scored entry (JSON), private
    sa.Column("correct", sa.LargeBinary, nullable=False),       # per-item correctness (packed bits), private
)
_rate = sa.Table(
    "mh_rate_events", _md,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("who", sa.String(300), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),           # accepted | attempt
    sa.Column("at", sa.Float, nullable=False),                  # Unix time: one clock for every process
    sa.Index("ix_mh_rate_who", "who", "kind", "at"),
    sa.Index("ix_mh_rate_at", "at"),
)

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


class OverRate(Exception):
    """A rate limit is reached: nothing was written; ``wait``: seconds until the oldest counted event leaves the
    window."""

    def __init__(self, wait: float):
        super().__init__(f"try again in {wait:.0f} s")
        self.wait = wait


@dataclass(frozen=True)
class StoredScore:
    """A submission's kept score (private): the scorer's key, the data version, the entry JSON, correctness bits."""

    submission_id: int
    scorer: str
    data_version: str
    entry: str
    correct: bytes


@dataclass(frozen=True)
class Rate:
    """A limit of ``n`` events of ``kind`` per ``window`` seconds for one submitter ``who``."""

    who: str
    n: int
    window: float
    kind: str = "accepted"


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
                if con.execute(sa.select(_meta.c.value).where(_meta.c.key == "generation")).first() is None:
                    con.execute(_meta.insert().values(key="generation", value="0"))
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
            kind: str, filename: str | None, submitter: str | None, content_key: str | None = None,
            score: StoredScore | None = None, rate: Rate | None = None) -> tuple[StoredSubmission, bool]:
        """Keep one accepted submission, with its ``score`` (private), in one transaction. Returns ``(row, True)``,
        or ``(the row already holding these bytes or this content, False)``; :class:`DeletedBefore` when a
        maintainer deleted the same content and has not restored it; :class:`StoreFull` when the disk is full;
        :class:`OverRate` when ``rate``'s submitter already has ``rate.n`` accepted submissions in the window
        (counted in the same transaction as the insert, so two processes cannot both admit the last one);
        nothing is written then."""
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
                self._bump(con)  # first: it takes the store's write lock (see _bump) before the rate is counted
                if rate is not None:
                    now = time.time()
                    wait = self._over(con, rate, now)
                    if wait is not None:
                        raise OverRate(wait)
                    con.execute(_rate.insert().values(who=rate.who, kind=rate.kind, at=now))
                new_id = con.execute(_subs.insert().values(**values).returning(_subs.c.id)).scalar_one()
                if score is not None:
                    con.execute(_scores.insert().values(submission_id=new_id, scorer=score.scorer,
                                                        data_version=score.data_version, entry=score.entry,
                                                        correct=score.correct))
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

    # -------------------------------------------------------------- generation, scores, rate counts

    @staticmethod
    def _bump(con) -> None:
        """Count one more change of the boards. An UPDATE of one row: on SQLite it takes the database's write lock
        (the statement that opens the transaction, so no older snapshot can go stale), on PostgreSQL the row's
        lock; either way the transactions that bump are one at a time, and what they count next is current."""
        con.execute(_meta.update().where(_meta.c.key == "generation").values(
            value=sa.cast(sa.cast(_meta.c.value, sa.Integer) + 1, sa.String)))

    def generation(self) -> int:
        """The store's generation: changed by every write that changes a board, in any process."""
        with self.engine.connect() as con:
            value = con.execute(sa.select(_meta.c.value).where(_meta.c.key == "generation")).scalar()
        return int(value or 0)

    def scores(self, ids: list[int] | None = None) -> dict[int, StoredScore]:
        """The kept scores of ``ids`` (all when None), by submission id; a submission without one is absent."""
        out: dict[int, StoredScore] = {}
        with self.engine.connect() as con:
            chunks = [None] if ids is None else [ids[k:k + 500] for k in range(0, len(ids), 500)]
            for chunk in chunks:
                q = sa.select(*_scores.c)
                if chunk is not None:
                    q = q.where(_scores.c.submission_id.in_(chunk))
                for r in con.execute(q):
                    out[r[0]] = StoredScore(r[0], r[1], r[2], r[3], bytes(r[4]))
        return out

    def keep_score(self, score: StoredScore) -> bool:
        """Keep (or replace) a submission's score; False when the submission is gone (deleted meanwhile) or the
        store is full (the score is then made again when next needed)."""
        try:
            with self.engine.begin() as con:
                self._bump(con)
                if con.execute(sa.select(_subs.c.id).where(_subs.c.id == score.submission_id)).first() is None:
                    return False
                con.execute(_scores.delete().where(_scores.c.submission_id == score.submission_id))
                con.execute(_scores.insert().values(**score.__dict__))
        except sa_exc.OperationalError as exc:
            if _is_full(exc):
                return False
            raise
        return True

    @staticmethod
    def _over(con, rate: Rate, now: float) -> float | None:
        """Seconds until ``rate.who`` may have one more event of ``rate.kind``, or None if it may now."""
        recent = (_rate.c.who == rate.who) & (_rate.c.kind == rate.kind) & (_rate.c.at > now - rate.window)
        count = con.execute(sa.select(sa.func.count()).select_from(_rate).where(recent)).scalar_one()
        if count < rate.n:
            return None
        oldest = con.execute(sa.select(_rate.c.at).where(recent).order_by(_rate.c.at)
                             .offset(count - rate.n).limit(1)).scalar_one()
        return max(0.0, oldest + rate.window - now)

    def attempt(self, rate: Rate) -> float | None:
        """Count one attempt of ``rate.who`` unless it already made ``rate.n`` in the window (then the seconds
        until it may, and nothing is counted); events older than the window are forgotten here."""
        now = time.time()
        try:
            with self.engine.begin() as con:
                if self.dialect == "postgresql":
                    key = int.from_bytes(hashlib.sha256(rate.who.encode()).digest()[:8], "big", signed=True)
                    con.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))
                # on SQLite the DELETE is the first statement: it takes the write lock before anything is counted
                con.execute(_rate.delete().where(_rate.c.at <= now - max(rate.window, 86400.0)))
                wait = self._over(con, rate, now)
                if wait is None:
                    con.execute(_rate.insert().values(who=rate.who, kind=rate.kind, at=now))
        except sa_exc.OperationalError as exc:
            if _is_full(exc):  # a full store cannot count: the upload goes on, to be refused as full (507)
                return None
            raise
        return wait

    def accepted_wait(self, rate: Rate) -> float | None:
        """Seconds until ``rate.who`` may have one more accepted submission, or None (a read: nothing counted)."""
        with self.engine.connect() as con:
            return self._over(con, rate, time.time())

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
            self._bump(con)
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
                con.execute(_scores.delete().where(_scores.c.submission_id == sub_id))
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
