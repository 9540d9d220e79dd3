"""The extraction cache (``core.extract.stored``): ``compare`` reads what ``score`` read from disk, gets the same
answers as reading them again, and never trusts an entry that is not whole or not this extractor's."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.extract import EXTRACTIONS, extract_choice, stored

OPTIONS = ("Preparation", "Dissection", "Clipping and cutting", "Closure")
REPLIES = ["C", "The answer is B.", '{"answer": "D"}', "I cannot tell from these frames.", "A or B", "Closure",
           "<think>A? no.</think> Final answer: (a)", "Option E", ""]


def _pairs(n=stored.MIN_BATCH, seed=0):
    r = random.Random(seed)
    return [(f"{r.choice(REPLIES)} ({i})" if i % 3 else r.choice(REPLIES), OPTIONS) for i in range(n)]


class Counting:
    """An extraction rule that counts the outputs it reads."""

    def __init__(self, rule=extract_choice):
        self.calls = 0
        self.rule = rule

    def __call__(self, text, options):
        self.calls += 1
        return self.rule(text, options)


def many(rule, pairs, name="default"):
    """One rule's readings of ``pairs`` through the cache."""
    return stored.extract_many({name: rule}, pairs)[name]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(stored.CACHE_ENV, str(tmp_path / "extractions"))
    return tmp_path / "extractions"


def test_a_batch_read_before_is_read_from_the_cache(cache):
    pairs = _pairs()
    first, second = Counting(), Counting()
    a = many(first, pairs)
    b = many(second, pairs)
    assert a == b == [extract_choice(t, o) for t, o in pairs]
    assert first.calls == len(pairs) and second.calls == 0
    assert len(list(cache.glob("*.json"))) == 1
    # another rule, another text, other options: each its own entry
    authors = EXTRACTIONS["authors"]
    assert many(Counting(authors), pairs, "authors") == [authors(t, o) for t, o in pairs]
    changed = [*pairs[:-1], ("The answer is A.", OPTIONS)]
    third = Counting()
    assert many(third, changed)[-1].letter == "A" and third.calls == len(pairs)
    fourth = Counting()
    many(fourth, [(t, (*o[:3], "Other")) for t, o in pairs])
    assert fourth.calls == len(pairs) and len(list(cache.glob("*.json"))) == 4


def test_another_extractor_version_does_not_find_the_entry(cache, monkeypatch):
    pairs = _pairs()
    many(Counting(), pairs)
    monkeypatch.setattr(stored, "extractor_version", lambda: "another")
    again = Counting()
    many(again, pairs)
    assert again.calls == len(pairs)


def test_the_version_follows_the_extractor_source(tmp_path, monkeypatch):
    """Any change to a rule's source (here one character of candidates.py) is another version."""
    source = Path(stored.__file__).parent
    copy = tmp_path / "extract"
    copy.mkdir()
    for f in source.glob("*.py"):
        (copy / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(stored, "__file__", str(copy / "stored.py"))
    same = stored.extractor_version.__wrapped__()
    assert same == stored.extractor_version()
    text = (copy / "candidates.py").read_text()
    (copy / "candidates.py").write_text(text.replace("_T_WEAK", "_T_WEAK ", 1))
    assert stored.extractor_version.__wrapped__() != same


@pytest.mark.parametrize("damage", ["truncated", "one reading short", "not a reading", "another format",
                                    "not json"])
def test_a_damaged_entry_is_read_again_and_rewritten(cache, damage):
    pairs = _pairs()
    want = many(Counting(), pairs)
    (path,) = cache.glob("*.json")
    data = json.loads(path.read_text())
    if damage == "truncated":
        path.write_text(path.read_text()[:50])
    elif damage == "one reading short":
        data["readings"] = data["readings"][:-1]
        path.write_text(json.dumps(data))
    elif damage == "not a reading":
        data["readings"] = "?" + data["readings"][1:]
        path.write_text(json.dumps(data))
    elif damage == "another format":
        data["format"] += 1
        path.write_text(json.dumps(data))
    else:
        path.write_bytes(b"\xff\x00")
    again = Counting()
    assert many(again, pairs) == want and again.calls == len(pairs)
    assert many(Counting(), pairs) == want  # rewritten whole
    assert json.loads(path.read_text()) == {"format": stored._FORMAT, "readings": "".join(
        r.letter if r.status == "ok" else r.status[0] for r in want)}


def test_both_rules_of_a_file_are_read_in_one_call(cache):
    pairs = _pairs()
    rules = {"default": Counting(), "authors": Counting(EXTRACTIONS["authors"])}
    first = stored.extract_many(rules, pairs)
    assert first == {name: [rule.rule(t, o) for t, o in pairs] for name, rule in rules.items()}
    again = {name: Counting(rule.rule) for name, rule in rules.items()}
    assert stored.extract_many(again, pairs) == first and all(r.calls == 0 for r in again.values())
    assert len(list(cache.glob("*.json"))) == 2


@pytest.mark.parametrize("value", ["0", "off", "OFF"])
def test_the_cache_can_be_turned_off(value, tmp_path, monkeypatch):
    monkeypatch.setenv(stored.CACHE_ENV, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    pairs = _pairs()
    for _ in range(2):
        counting = Counting()
        many(counting, pairs)
        assert counting.calls == len(pairs)
    assert stored.cache_root() is None and not any(tmp_path.rglob("*.json"))


def test_small_batches_and_an_unwritable_cache_are_read_as_usual(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(stored.CACHE_ENV, str(blocker / "extractions"))  # under a file: cannot be created
    pairs = _pairs()
    assert many(Counting(), pairs) == [extract_choice(t, o) for t, o in pairs]
    monkeypatch.setenv(stored.CACHE_ENV, str(tmp_path / "cache"))
    many(Counting(), pairs[: stored.MIN_BATCH - 1])
    assert not (tmp_path / "cache").exists()


def test_the_default_folder_is_under_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(stored.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert stored.cache_root() == tmp_path / "medhorizon_tasks" / "extractions"


def _runs(synthetic, tmp_path, n_runs=3, n_items=None):
    """Prediction files of a few simulated runs over the synthetic items (varied replies, some wrong)."""
    items = load_release(synthetic.data_path)
    paths = []
    for k in range(n_runs):
        r = random.Random(k)
        rows = [{"uid": it.uid, "prediction": r.choice([f"The answer is {it.answer}.", r.choice("ABCD"),
                                                        f"**{r.choice('ABCD')}**", "Not sure.", "A or C"])}
                for it in items]
        path = tmp_path / f"run{k}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in rows))
        paths.append(str(path))
    return paths


def test_score_then_compare_prints_what_it_prints_without_the_cache(synthetic, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(stored, "MIN_BATCH", 10)  # the synthetic benchmark has 88 items
    runs = _runs(synthetic, tmp_path)
    data = ["--data", str(synthetic.data_path)]
    out = {}
    for setting in ("off", str(tmp_path / "cache")):
        monkeypatch.setenv(stored.CACHE_ENV, setting)
        printed = []
        for path in runs:
            assert main(["score", "--benchmark", "medhorizon", *data, "--predictions", path, "--json"]) == 0
            printed.append(capsys.readouterr().out)
        calls = Counting()
        monkeypatch.setitem(EXTRACTIONS, "default", calls)
        for extra in ([], ["--json"]):
            assert main(["compare", *runs, *data, *extra]) == 0
            printed.append(capsys.readouterr().out)
        monkeypatch.setitem(EXTRACTIONS, "default", extract_choice)
        out[setting] = (printed, calls.calls)
    (off, calls_off), (on, calls_on) = out.values()
    assert on == off
    assert calls_off > 0 and calls_on == 0, "compare read every answer score had read from the cache"
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2 * len(runs)  # both rules of each run
