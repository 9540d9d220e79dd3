"""The boards the service shows, rebuilt from the store through ``leaderboard/``'s one path.

A board is :func:`~..leaderboard.build.rank_board` of :func:`~..leaderboard.build.score_entry` of each public
submission, exactly as ``leaderboard build`` makes it, so a served board and a built board of the same
submissions are the same numbers.

**Scores are kept, not recomputed.** A submission is scored once, when it is accepted; its entry and per-item
correctness go into the store's private ``mh_scores`` table in the submission's own transaction
(:func:`stored_score`, :func:`entry_from_store`), under the scorer's key (:func:`scorer_key`: the
package's :data:`~..leaderboard.build.SCORER_VERSION`, the resampling settings, the fields of an entry). A
restarted service (or another process on the same store) reads its first board from them: ranking only, no
submission's bytes read or scored again. A kept score under another key (the scoring code or settings changed)
or none at all (a store written before scores were kept) is not served: the service rescores it in a background
thread, and until then the board leaves the entry out and says how many are being rescored.

Memos, none of which can disagree with the store, whichever process wrote it:

* an entry is kept by its stored row (whose bytes never change): a new board decodes or scores only rows it
  has not seen;
* the ranked boards are kept under the store's generation (a counter every write bumps in its own
  transaction, read at each request) and, a few of them, under the list of public submissions they rank.

Public views (:func:`board_json`, :func:`entry_json`) carry aggregates and intervals only, never whether
an item was answered right (``Entry.paired``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from ..benchmarks.data import BENCHMARKS, BenchmarkData
from ..core.safeio import loads_json
from ..leaderboard.build import (
    DEFAULT_ALPHA,
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    SCORER_VERSION,
    Board,
    Entry,
    pair_by_key,
    rank_board,
    score_entry,
)
from ..leaderboard.submission import Submission, input_protocol_text, validate_submission
from .store import Store, StoredScore, StoredSubmission

__all__ = ["Boards", "board_json", "entry_json", "entry_href", "scorer_key", "stored_score", "entry_from_store"]

log = logging.getLogger("medhorizon_tasks.service")


# A public service may not pair two entries by their model name alone (anyone can send a blind entry under
# another team's name): only entries sent with one submitter token are paired.
PAIR_RULE = "the same model name and were sent with the same submitter token"


def entry_href(sub_id: int) -> str:
    return f"/submissions/{int(sub_id)}"


# ------------------------------------------------------------------ an entry kept in the store

def scorer_key(n_resamples: int, seed: int) -> str:
    """What a kept score was made by: the scorer's version, the resampling settings, and the fields of an entry
    (a field added to :class:`Entry` changes the key by itself)."""
    fields = ",".join(f.name for f in dataclasses.fields(Entry))
    return (f"scorer={SCORER_VERSION};resamples={n_resamples};seed={seed};"
            f"fields={hashlib.sha256(fields.encode()).hexdigest()[:12]}")


_INDEX: dict[int, tuple[list, dict]] = {}  # id(data.ids) -> (ids, {id: position})


def _positions(ids: list) -> dict:
    hit = _INDEX.get(id(ids))
    if hit is None or hit[0] is not ids:
        hit = _INDEX[id(ids)] = (ids, {uid: k for k, uid in enumerate(ids)})
    return hit[1]


def _pack(paired: dict, ids: list) -> bytes | None:
    """Per-item correctness as two bit arrays over the data's items (which are present, which are right), or
    None when the entry's items are not the data's, in its order (then it is kept as JSON)."""
    index = _positions(ids)
    pos = [index.get(uid) for uid in paired]
    if any(p is None for p in pos) or any(a >= b for a, b in zip(pos, pos[1:])):
        return None
    present = np.zeros(len(ids), dtype=bool)
    right = np.zeros(len(ids), dtype=bool)
    present[pos] = True
    right[pos] = [bool(v) for v in paired.values()]
    return np.packbits(present).tobytes() + np.packbits(right).tobytes()


def _unpack(bits: bytes, ids: list) -> dict:
    half = len(bits) // 2
    present = np.unpackbits(np.frombuffer(bits[:half], dtype=np.uint8), count=len(ids)).astype(bool)
    right = np.unpackbits(np.frombuffer(bits[half:], dtype=np.uint8), count=len(ids)).astype(bool)
    if present.all():
        return dict(zip(ids, right.tolist()))
    where = np.flatnonzero(present)
    return dict(zip([ids[k] for k in where.tolist()], right[where].tolist()))


def _plain(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"{type(x).__name__} in a scored entry")


def stored_score(entry: Entry, data: BenchmarkData, scorer: str, sub_id: int = 0) -> StoredScore:
    """A scored entry as the store keeps it: its fields as JSON, its per-item correctness as bits."""
    payload = {f.name: getattr(entry, f.name) for f in dataclasses.fields(Entry) if f.name not in ("submission", "paired")}
    payload["metadata"] = entry.submission.metadata
    bits = b""
    paired = entry.paired
    if isinstance(paired, dict) and all(isinstance(v, (bool, np.bool_)) for v in paired.values()):
        packed = _pack(paired, data.ids)
        if packed is not None:
            bits, payload["paired"] = packed, {"bits": True}
        else:
            payload["paired"] = {"pairs": [[k, bool(v)] for k, v in paired.items()]}
    else:
        payload["paired"] = {"value": paired}
    return StoredScore(sub_id, scorer, data.version, json.dumps(payload, default=_plain), bits)


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def entry_from_store(score: StoredScore, data: BenchmarkData) -> Entry:
    """The entry :func:`stored_score` kept (no submission's bytes read, nothing scored)."""
    payload = json.loads(score.entry)
    meta = payload.pop("metadata")
    kept = payload.pop("paired")
    if "bits" in kept:
        paired = _unpack(score.correct, data.ids)
    elif "pairs" in kept:
        paired = {_key(k): v for k, v in kept["pairs"]}
    else:
        paired = kept["value"]
    payload["ci"] = tuple(payload["ci"])
    return Entry(submission=Submission(meta, {}, ""), paired=paired, **payload)


# ------------------------------------------------------------------ the boards

class Boards:
    """Scores and ranks the store's submissions on the data the server holds (thread-safe).

    ``background``: rescore stale or missing kept scores in a thread of this process, leaving their entries off
    the board until then (the service); without it (``leaderboard`` tools, tests) they are scored on the spot."""

    def __init__(self, store: Store, datas: Mapping[str, BenchmarkData], *,
                 n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = DEFAULT_SEED, alpha: float = DEFAULT_ALPHA,
                 max_boards: int = 8, background: bool = False):
        self.store, self.datas = store, dict(datas)
        self.n_resamples, self.seed, self.alpha = n_resamples, seed, alpha
        self.scorer = scorer_key(n_resamples, seed)
        self.background = background
        self._by_sha: dict[tuple, Entry] = {}   # scored here: (hash of the scored bytes, data version) -> entry
        self._by_row: dict[tuple, Entry] = {}   # a stored row -> its entry
        self._boards: OrderedDict[tuple, list[Board]] = OrderedDict()
        self._current: tuple | None = None      # (generation, boards, elsewhere)
        self._max_boards = max_boards
        self._lock = threading.Lock()
        self._pending: set[int] = set()         # submission ids waiting for the background rescoring
        self._failed: dict[int, str] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- entries

    def _sha_key(self, body: bytes, data: BenchmarkData) -> tuple:
        return (hashlib.sha256(body).hexdigest(), data.benchmark, data.version)

    @staticmethod
    def _row_key(row: StoredSubmission) -> tuple:
        return (row.id, row.sha256, row.received_at, row.benchmark, row.data_version)

    def _is_current(self, score: StoredScore | None, data: BenchmarkData) -> bool:
        return score is not None and score.scorer == self.scorer and score.data_version == data.version

    def score(self, sub: Submission, data: BenchmarkData, scored_bytes: bytes, sub_id: int | None = None) -> Entry:
        """The entry of a validated submission (kept under its bytes' hash); its predictions are not kept."""
        key = self._sha_key(scored_bytes, data)
        with self._lock:
            hit = self._by_sha.get(key)
        if hit is None:
            hit = score_entry(sub, data, n_resamples=self.n_resamples, seed=self.seed)
            hit.submission = Submission(sub.metadata, {}, "")  # the predictions are needed no more
            with self._lock:
                self._by_sha[key] = hit
        return self._placed(hit, sub_id)

    def to_keep(self, entry: Entry, data: BenchmarkData) -> StoredScore:
        """``entry`` as the store keeps it beside its submission (:meth:`Store.add`'s ``score``)."""
        return stored_score(entry, data, self.scorer)

    @staticmethod
    def _placed(entry: Entry, sub_id: int | None) -> Entry:
        """A copy of a kept entry for one board (ranking changes an entry), named by its page."""
        source = entry_href(sub_id) if sub_id is not None else ""
        # secondary is copied too: a board may add to it from the other entries (Sureon's MG of a visual entry
        # beside its blind one), which must not stay on the kept entry for the next board
        return dataclasses.replace(entry, submission=Submission(entry.submission.metadata, {}, source),
                                   secondary=dict(entry.secondary))

    _UNREAD = object()

    def entry_of(self, row: StoredSubmission, stored=_UNREAD) -> Entry:
        """:meth:`_entry_of`, paired (Sureon's MG) only with entries of the same submitter token and model."""
        e = self._entry_of(row, stored)
        e.pair_key = (row.submitter, e.metadata["model"]) if (row.submitter or "").startswith("token:") else None
        return e

    def _entry_of(self, row: StoredSubmission, stored=_UNREAD) -> Entry:
        """The entry of a stored submission on the server's data: known here, else its kept score when current,
        else scored now from the store's bytes (and its score kept)."""
        data = self.datas[row.benchmark]
        row_key = self._row_key(row)
        with self._lock:
            hit = self._by_row.get(row_key)
        if hit is not None:
            return self._placed(hit, row.id)
        if stored is self._UNREAD:
            stored = self.store.scores([row.id]).get(row.id)
        if self._is_current(stored, data):
            hit = entry_from_store(stored, data)
        else:
            body = self.store.submission_bytes(row.id)
            key = self._sha_key(body, data)
            with self._lock:
                hit = self._by_sha.get(key)
            if hit is None:
                sub = validate_submission(loads_json(body.decode("utf-8"), source=f"submission {row.id}"), data,
                                          source=entry_href(row.id))
                hit = self.score(sub, data, body)
                hit.submission = Submission(hit.metadata, {}, "")
            self.store.keep_score(stored_score(hit, data, self.scorer, row.id))
        with self._lock:
            self._by_row[row_key] = hit
        return self._placed(hit, row.id)

    # -------------------------------------------------------------- background rescoring

    def rescoring(self) -> int:
        """How many entries are waiting to be rescored (left off the boards meanwhile)."""
        with self._lock:
            return len(self._pending)

    def _queue(self, ids: list[int]) -> None:
        with self._lock:
            self._pending.update(i for i in ids if i not in self._failed)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._rescore_loop, name="mh-rescore", daemon=True)
                self._thread.start()
        self._wake.set()

    def _rescore_loop(self) -> None:
        while True:
            self._wake.wait(60)
            self._wake.clear()
            while True:
                with self._lock:
                    if not self._pending:
                        break
                    sub_id = min(self._pending)
                try:
                    row = self.store.get(sub_id)
                    if row is not None and row.benchmark in self.datas:
                        self.entry_of(row)  # a score kept meanwhile by another process is read, not redone
                except Exception as exc:  # noqa: BLE001 - one entry's failure must not stop the others
                    log.exception("rescoring submission %s failed", sub_id)
                    with self._lock:
                        self._failed[sub_id] = str(exc)
                with self._lock:
                    self._pending.discard(sub_id)

    # -------------------------------------------------------------- boards

    def on_server_data(self, rows: list[StoredSubmission]) -> tuple[list[StoredSubmission], list[StoredSubmission]]:
        """``rows`` split into those on the data the server holds and those on other data versions."""
        here = [r for r in rows if r.benchmark in self.datas and r.data_version == self.datas[r.benchmark].version]
        ids = {r.id for r in here}
        return here, [r for r in rows if r.id not in ids]

    def boards(self, rows: list[StoredSubmission] | None = None) -> tuple[list[Board], list[StoredSubmission]]:
        """The boards of the public submissions (read from the store now) and the public ones on other data."""
        generation = self.store.generation() if rows is None else None
        with self._lock:
            if generation is not None and self._current is not None and self._current[0] == generation:
                return self._current[1], self._current[2]
        rows = self.store.list() if rows is None else rows
        here, elsewhere = self.on_server_data(rows)
        with self._lock:
            unknown = {r.id for r in here if self._row_key(r) not in self._by_row}
        stored = self.store.scores(sorted(unknown)) if unknown else {}
        placed, pending = [], []
        for r in here:
            s = stored.get(r.id)
            if r.id in unknown and self.background and not self._is_current(s, self.datas[r.benchmark]):
                pending.append(r)  # stale or never kept: rescored in the background, never served stale
            else:
                placed.append(r)
        if pending:
            self._queue([r.id for r in pending])
        key = (tuple((r.id, r.sha256) for r in placed), tuple(r.id for r in pending))
        with self._lock:
            out = self._boards.get(key)
            if out is not None:
                self._boards.move_to_end(key)
        if out is None:
            out = []
            for bench in BENCHMARKS:
                entries = [self.entry_of(r, stored.get(r.id)) if r.id in unknown else self.entry_of(r)
                           for r in placed if r.benchmark == bench]
                if entries:
                    board = rank_board(bench, self.datas[bench], entries, n_resamples=self.n_resamples,
                                       seed=self.seed, alpha=self.alpha, pair=pair_by_key, pair_rule=PAIR_RULE)
                    waiting = sum(1 for r in pending if r.benchmark == bench)
                    if waiting:
                        board.notes.append(f"{waiting} more entr{'y is' if waiting == 1 else 'ies are'} being "
                                           "rescored (the scoring code or its settings changed since they were "
                                           "kept): left off this board until then, never shown with stale numbers.")
                    out.append(board)
            with self._lock:
                self._boards[key] = out
                while len(self._boards) > self._max_boards:
                    self._boards.popitem(last=False)
        with self._lock:
            if generation is not None:
                self._current = (generation, out, elsewhere)
        return out, elsewhere


# ------------------------------------------------------------------ public views (aggregates only)

def _f(x):
    return None if x is None or x != x else float(x)


def _entry_row(board: Board, e: Entry) -> dict:
    m = e.metadata
    return {"id": int(e.submission.source.rsplit("/", 1)[-1]) if e.submission.source else None,
            "page": e.submission.source or None, "rank": None if e.off_protocol else e.rank,
            "off_protocol": list(e.off_protocol), "model": m["model"], "size": m["size"],
            "input_protocol": m["input_protocol"], "input_protocol_text": input_protocol_text(m),
            "mode": m.get("mode"), "date": m["date"], "url": m.get("url"), "notes": m.get("notes"),
            "value": _f(e.headline), "ci95": [_f(e.ci[0]), _f(e.ci[1])], "n": e.n,
            "p_vs_leader": _f(e.p_value), "p_vs_leader_holm": _f(e.p_holm), "significant": e.significant,
            "secondary": {k: _f(e.secondary.get(k)) for k, _, _ in board.secondary}}


def board_json(boards: list[Board], elsewhere: list[StoredSubmission], rescoring: int = 0) -> dict:
    return {"boards": [{"benchmark": b.benchmark, "name": b.name, "data_version": b.data_version,
                        "metric": b.metric, "n_unit": b.n_unit, "ci_method": b.ci_method,
                        "test_method": b.test_method, "alpha": b.alpha, "notes": b.notes,
                        "secondary": [{"key": k, "label": label, "kind": kind} for k, label, kind in b.secondary],
                        "entries": [_entry_row(b, e) for e in b.entries]} for b in boards],
            "other_data_versions": len(elsewhere), "rescoring": rescoring}


def entry_json(row: StoredSubmission, board: Board | None, entry: Entry | None) -> dict:
    """A submission's public page as JSON: its metadata, when it was received, its scores with intervals."""
    out = {"id": row.id, "page": entry_href(row.id), "benchmark": row.benchmark, "data_version": row.data_version,
           "model": row.model, "received_at": row.received_at, "state": row.state, "sha256": row.sha256,
           "kind": row.kind, "filename": row.filename}
    if board is not None and entry is not None:
        out.update(metadata=entry.metadata, metric=board.metric, ci_method=board.ci_method,
                   scores=_entry_row(board, entry), groups=entry.groups)
    return out
