"""The boards the service shows, rebuilt from the store on every request through ``leaderboard/``'s one path.

A board is :func:`~..leaderboard.build.rank_board` of :func:`~..leaderboard.build.score_entry` of each public
submission, exactly as ``leaderboard build`` makes it, so a served board and a built board of the same
submissions are the same numbers. Two memos keep a request fast, and neither can disagree with the store:

* an entry is a function of the submission's bytes and the data (and the resampling settings): it is kept
  under the SHA-256 of the scored JSON, the data version and those settings; a stored row (whose bytes never
  change) names that key once it has been read, so a new board reads no known submission's bytes again;
* a ranked board is a function of the entries on it: it is kept under the list of (id, hash) of the public
  submissions read from the store at that request.

Each request reads the store's list of submissions first; what it shows is made from that list alone.
Public views (:func:`board_json`, :func:`entry_json`) carry aggregates and intervals only, never whether
an item was answered right (``Entry.paired``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping

from ..benchmarks.data import BENCHMARKS, BenchmarkData
from ..core.safeio import loads_json
from ..leaderboard.build import (
    DEFAULT_ALPHA,
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    Board,
    Entry,
    pair_by_key,
    rank_board,
    score_entry,
)
from ..leaderboard.submission import Submission, input_protocol_text, validate_submission
from .store import Store, StoredSubmission

__all__ = ["Boards", "board_json", "entry_json", "entry_href"]


# A public service may not pair two entries by their model name alone (anyone can send a blind entry under
# another team's name): only entries sent with one submitter token are paired.
PAIR_RULE = "the same model name and were sent with the same submitter token"


def entry_href(sub_id: int) -> str:
    return f"/submissions/{int(sub_id)}"


class Boards:
    """Scores and ranks the store's submissions on the data the server holds (thread-safe)."""

    def __init__(self, store: Store, datas: Mapping[str, BenchmarkData], *,
                 n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = DEFAULT_SEED, alpha: float = DEFAULT_ALPHA,
                 max_boards: int = 8):
        self.store, self.datas = store, dict(datas)
        self.n_resamples, self.seed, self.alpha = n_resamples, seed, alpha
        self._entries: dict[tuple, Entry] = {}
        self._row_entry: dict[tuple, tuple] = {}  # a stored row -> the key of its entry in _entries
        self._boards: OrderedDict[tuple, list[Board]] = OrderedDict()
        self._max_boards = max_boards
        self._lock = threading.Lock()

    # -------------------------------------------------------------- entries

    def _entry_key(self, sha: str, data: BenchmarkData) -> tuple:
        return (sha, data.benchmark, data.version, self.n_resamples, self.seed)

    def score(self, sub: Submission, data: BenchmarkData, scored_bytes: bytes, sub_id: int | None = None) -> Entry:
        """The entry of a validated submission (kept under its bytes' hash); its predictions are not kept."""
        key = self._entry_key(hashlib.sha256(scored_bytes).hexdigest(), data)
        with self._lock:
            hit = self._entries.get(key)
        if hit is None:
            hit = score_entry(sub, data, n_resamples=self.n_resamples, seed=self.seed)
            hit.submission = Submission(sub.metadata, {}, "")  # the predictions are needed no more
            with self._lock:
                self._entries[key] = hit
        return self._placed(hit, sub_id)

    @staticmethod
    def _placed(entry: Entry, sub_id: int | None) -> Entry:
        """A copy of a kept entry for one board (ranking changes an entry), named by its page."""
        source = entry_href(sub_id) if sub_id is not None else ""
        # secondary is copied too: a board may add to it from the other entries (Sureon's MG of a visual entry
        # beside its blind one), which must not stay on the kept entry for the next board
        return dataclasses.replace(entry, submission=Submission(entry.submission.metadata, {}, source),
                                   secondary=dict(entry.secondary))

    def entry_of(self, row: StoredSubmission) -> Entry:
        """:meth:`_entry_of`, paired (Sureon's MG) only with entries of the same submitter token and model."""
        e = self._entry_of(row)
        e.pair_key = (row.submitter, e.metadata["model"]) if (row.submitter or "").startswith("token:") else None
        return e

    def _entry_of(self, row: StoredSubmission) -> Entry:
        """The entry of a stored submission on the server's data (scored from the store's bytes on first need).

        A stored row's bytes never change, so the row (its id, upload hash and time of receipt) names its
        entry: once known, ranking the board again reads no submission's bytes from the store (reading and
        hashing every submission's ~0.4 MiB on each new board was about half of ranking it)."""
        data = self.datas[row.benchmark]
        row_key = (row.id, row.sha256, row.received_at, row.benchmark, row.data_version)
        with self._lock:
            key = self._row_entry.get(row_key)
            hit = self._entries.get(key) if key is not None else None
        if hit is not None:
            return self._placed(hit, row.id)
        body = self.store.submission_bytes(row.id)
        key = self._entry_key(hashlib.sha256(body).hexdigest(), data)
        with self._lock:
            hit = self._entries.get(key)
        if hit is None:
            sub = validate_submission(loads_json(body.decode("utf-8"), source=f"submission {row.id}"), data,
                                      source=entry_href(row.id))
            self.score(sub, data, body, row.id)
        with self._lock:
            self._row_entry[row_key] = key
            hit = self._entries[key]
        return self._placed(hit, row.id)

    # -------------------------------------------------------------- boards

    def on_server_data(self, rows: list[StoredSubmission]) -> tuple[list[StoredSubmission], list[StoredSubmission]]:
        """``rows`` split into those on the data the server holds and those on other data versions."""
        here = [r for r in rows if r.benchmark in self.datas and r.data_version == self.datas[r.benchmark].version]
        ids = {r.id for r in here}
        return here, [r for r in rows if r.id not in ids]

    def boards(self, rows: list[StoredSubmission] | None = None) -> tuple[list[Board], list[StoredSubmission]]:
        """The boards of the public submissions (read from the store now) and the public ones on other data."""
        rows = self.store.list() if rows is None else rows
        here, elsewhere = self.on_server_data(rows)
        key = tuple((r.id, r.sha256) for r in here)
        with self._lock:
            if key in self._boards:
                self._boards.move_to_end(key)
                return self._boards[key], elsewhere
        out = []
        for bench in BENCHMARKS:
            entries = [self.entry_of(r) for r in here if r.benchmark == bench]
            if entries:
                out.append(rank_board(bench, self.datas[bench], entries, n_resamples=self.n_resamples,
                                      seed=self.seed, alpha=self.alpha, pair=pair_by_key, pair_rule=PAIR_RULE))
        with self._lock:
            self._boards[key] = out
            while len(self._boards) > self._max_boards:
                self._boards.popitem(last=False)
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


def board_json(boards: list[Board], elsewhere: list[StoredSubmission]) -> dict:
    return {"boards": [{"benchmark": b.benchmark, "name": b.name, "data_version": b.data_version,
                        "metric": b.metric, "n_unit": b.n_unit, "ci_method": b.ci_method,
                        "test_method": b.test_method, "alpha": b.alpha, "notes": b.notes,
                        "secondary": [{"key": k, "label": label, "kind": kind} for k, label, kind in b.secondary],
                        "entries": [_entry_row(b, e) for e in b.entries]} for b in boards],
            "other_data_versions": len(elsewhere)}


def entry_json(row: StoredSubmission, board: Board | None, entry: Entry | None) -> dict:
    """A submission's public page as JSON: its metadata, when it was received, its scores with intervals."""
    out = {"id": row.id, "page": entry_href(row.id), "benchmark": row.benchmark, "data_version": row.data_version,
           "model": row.model, "received_at": row.received_at, "state": row.state, "sha256": row.sha256,
           "kind": row.kind, "filename": row.filename}
    if board is not None and entry is not None:
        out.update(metadata=entry.metadata, metric=board.metric, ci_method=board.ci_method,
                   scores=_entry_row(board, entry), groups=entry.groups)
    return out
