"""`surghi zeroshot` inputs that used to end in a traceback or a silent choice, through the command: a label
template with another field or an unbalanced brace, a `module:Class` whose module raises at import, two
installed packages registering one encoder name, a prompts file naming one dataset (or class) in two
spellings, and a journal record that is valid JSON under the right key but damaged."""

from __future__ import annotations

import json

import pytest

from medhorizon_tasks.commands.main import main


@pytest.fixture(scope="module")
def items(surghi_sample, tmp_path_factory):
    """Items of two videos of the sample, its hierarchies beside them."""
    folder = tmp_path_factory.mktemp("zs_inputs")
    rows = [json.loads(x) for x in surghi_sample.annotations_path.read_text().splitlines()]
    keep = [r for r in rows if r["video"] in ("synthtree_01", "synthdag_01")]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    (folder / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    return folder / "items.jsonl", surghi_sample.video_root


def _run(capsys, items, out, *args) -> tuple[int, str]:
    data, root = items
    status = main(["surghi", "zeroshot", "--data", str(data), "--video-root", str(root), "--out", str(out),
                   "--quiet", *args])
    return status, capsys.readouterr().err


def _one_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("template,needle", [
    ("{label} {x}", "--label-template '{label} {x}': an unknown field {x}; its one field is {label}"),
    ("{label} {", "--label-template '{label} {': unbalanced brace (Single '{' encountered in format string)"),
    ("{0}{label}", "--label-template '{0}{label}': a positional field {0}; its one field is {label}"),
    ("{label:d}", "--label-template '{label:d}': Unknown format code 'd'"),
])
def test_a_label_template_python_cannot_format_is_one_line_naming_what_to_change(items, tmp_path, capsys,
                                                                                 template, needle):
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "synthetic_probe", "--label-template", template)
    assert status == 2 and needle in _one_line(err)
    assert "write a literal brace as {{ or }}" in err


def test_a_user_module_that_raises_at_import_is_one_line(items, tmp_path, capsys, monkeypatch):
    (tmp_path / "crashing_encoder.py").write_text("raise RuntimeError('no GPU driver found')\n")
    (tmp_path / "broken_syntax.py").write_text("def f(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "crashing_encoder:Enc")
    assert status == 2
    assert ("--encoder crashing_encoder:Enc: importing module 'crashing_encoder' failed (RuntimeError: no GPU driver "
            "found)") in _one_line(err)
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "broken_syntax:Enc")
    assert status == 2 and "importing module 'broken_syntax' failed (SyntaxError: " in _one_line(err)


def test_two_packages_registering_one_encoder_name_is_an_error_naming_both(items, tmp_path, capsys, monkeypatch):
    dist = tmp_path / "site" / "surg_plugin-2.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: surg-plugin\nVersion: 2.0\n")
    (dist / "entry_points.txt").write_text("[medhorizon_tasks.zeroshot_encoders]\n"
                                           "synthetic_probe = tiny_encoders:FrameProjection\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "synthetic_probe")
    line = _one_line(err)
    assert status == 2 and "--encoder synthetic_probe: more than one installed package registers" in line
    assert "medhorizon-tasks 0.1.0 (medhorizon_tasks.data.synthetic.probe_encoder:ProbeEncoder)" in line
    assert "surg-plugin 2.0 (tiny_encoders:FrameProjection)" in line
    assert not (tmp_path / "o" / "predictions.jsonl").exists()


def test_a_dataset_or_class_named_in_two_spellings_is_an_error(items, tmp_path, capsys):
    from medhorizon_tasks.data.synthetic.probe_encoder import probe_prompts
    from medhorizon_tasks.data.synthetic.surghi import HIERARCHIES

    prompts = probe_prompts(HIERARCHIES)
    twice = {**prompts, "synthtree": prompts["SynthTree"]}
    (tmp_path / "twice.json").write_text(json.dumps(twice))
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "synthetic_probe", "--prompts",
                       str(tmp_path / "twice.json"))
    assert status == 2 and "Traceback" not in err
    assert "datasets 'SynthTree' and 'synthtree' are one dataset (names are compared ignoring case, spaces, '-' " \
           "and '_'): keep one key" in err
    steps = dict(prompts["SynthDAG"]["steps"])
    steps["Stapling"] = ["the stapler fires"]
    (tmp_path / "label.json").write_text(json.dumps({"SynthDAG": {"steps": steps}}))
    status, err = _run(capsys, items, tmp_path / "o", "--encoder", "synthetic_probe", "--prompts",
                       str(tmp_path / "label.json"))
    assert status == 2 and "SynthDAG: steps: 'stapling' and 'Stapling' both name the step 'stapling'" in err


@pytest.mark.parametrize("damage", ["fewer_results", "not_a_record", "bad_label", "nan_score"])
def test_a_damaged_journal_record_is_labelled_again_with_a_warning(items, tmp_path, capsys, damage):
    out = tmp_path / "o"
    args = ["--encoder", "synthetic_probe", "--frames", "1"]
    status, err = _run(capsys, items, out, *args)
    assert status == 0, err
    first = (out / "predictions.jsonl").read_bytes()
    journal = out / "journal" / "rank-0.jsonl"
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    rec = lines[0]["response"]
    if damage == "fewer_results":
        rec["results"] = rec["results"][:-1]
    elif damage == "not_a_record":
        lines[0]["response"] = {"results": "done"}
    elif damage == "bad_label":
        rec["results"][0]["phases"][0] = "no such phase"
    else:
        rec["results"][0]["steps"][1][0][1] = float("nan")
    journal.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (out / "predictions.jsonl").unlink()
    for _ in range(2):  # the rerun repairs the journal: the next one trusts it again
        status, err = _run(capsys, items, out, *args)
        assert status == 0 and "Traceback" not in err, err
        assert (out / "predictions.jsonl").read_bytes() == first
    status, err = _run(capsys, items, out, *args)
    assert "is damaged (" not in err


def test_the_first_rerun_names_the_damaged_record(items, tmp_path, capsys):
    out = tmp_path / "o"
    args = ["--encoder", "synthetic_probe", "--frames", "1"]
    assert _run(capsys, items, out, *args)[0] == 0
    journal = out / "journal" / "rank-0.jsonl"
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    video = lines[0]["video"]
    lines[0]["response"]["results"] = lines[0]["response"]["results"][:3]
    journal.write_text("".join(json.dumps(x) + "\n" for x in lines))
    status, err = _run(capsys, items, out, *args)
    assert status == 0
    assert (f"warning: surghi zeroshot: the journal's record of video {video} (" in err
            and "is damaged (3 results for 20 frames); not trusted: the video is labelled again" in err)
    assert len(journal.read_text().splitlines()) == len(lines) + 1  # labelled again, appended, trusted next time
    assert "is damaged (" not in _run(capsys, items, out, *args)[1]
