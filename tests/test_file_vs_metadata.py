"""A video file that disagrees with the data is measured, mapped through time, or refused; never shown silently."""

import json

import numpy as np
import pytest

from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, build_prompt, prepare
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.sureon.items import load_items
from medhorizon_tasks.benchmarks.sureon.protocol import prepare as sureon_prepare
from medhorizon_tasks.benchmarks.surghi.frames import FrameRow
from medhorizon_tasks.benchmarks.surghi.protocol import prepare as surghi_prepare
from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.video.metadata import duration_tolerance
from medhorizon_tasks.data.synthetic.video_writer import write_video


def _video(path, seconds, fps):
    n = int(round(seconds * fps))
    frames = (np.full((24, 32, 3), i % 250, dtype=np.uint8) for i in range(n))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, frames, fps, 32, 24)
    return path


def _release(tmp_path, *, num_frames, fps, duration, windows):
    rec = {"key": "v1", "dataset": "AutoLaparo", "video_path": "v1.mp4", "num_frames": num_frames, "fps": fps,
           "duration_seconds": duration,
           "qa": [{"uid": 1, "question": "Which phase?", "options": ["a", "b", "c", "d"], "answer": "B",
                   "task_id": "PR", "evidence": {"support": "local", "frame_windows": windows}}]}
    path = tmp_path / "release.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    return load_release(path)[0]


def test_evidence_windows_are_mapped_through_time_when_the_file_has_another_frame_rate(tmp_path):
    # the data: 20 s at 10 fps, evidence at frames 100-120 = 10-12 s; the file: 20 s at 25 fps
    item = _release(tmp_path, num_frames=200, fps=10, duration=20.0, windows=[[100, 120]])
    _video(tmp_path / "v1.mp4", 20.0, 25.0)
    video = prepare(item, FrameSetting(mode="oracle"), tmp_path)
    assert video.plan.timestamps == (10.0, 11.0, 12.0)
    assert video.plan.indices == (250, 275, 300)


def test_a_file_twice_as_long_as_the_data_says_is_refused_naming_both_durations(tmp_path):
    item = _release(tmp_path, num_frames=500, fps=25, duration=20.0, windows=[[10, 20]])
    _video(tmp_path / "v1.mp4", 40.0, 25.0)
    with pytest.raises(VideoError) as e:
        prepare(item, FrameSetting(), tmp_path)
    msg = str(e.value)
    assert "item 1" in msg and "40.0 s" in msg and "20.0 s" in msg and "v1.mp4" in msg


def test_a_truncated_file_is_refused(tmp_path):
    item = _release(tmp_path, num_frames=500, fps=25, duration=20.0, windows=[[10, 20]])
    _video(tmp_path / "v1.mp4", 12.0, 25.0)
    with pytest.raises(VideoError, match="shorter"):
        prepare(item, FrameSetting(), tmp_path)


def test_within_the_tolerance_the_prompt_states_the_files_duration(tmp_path):
    item = _release(tmp_path, num_frames=500, fps=25, duration=20.0, windows=[[10, 20]])
    _video(tmp_path / "v1.mp4", 21.0, 25.0)  # 1 s longer: inside max(2 s, 1%)
    assert duration_tolerance(20.0) == 2.0 and duration_tolerance(7200.0) == 72.0
    video = prepare(item, FrameSetting(), tmp_path)
    assert video.duration_s == pytest.approx(21.0)
    assert "from a 0:00:21 clinical video" in build_prompt(item, video.plan, video.duration_s)
    assert max(video.plan.timestamps) == pytest.approx(20.0)


def test_sureon_clip_beyond_the_file_is_a_video_error(tmp_path):
    rec = {"uid": "s1", "category": "AD", "question": "What happens?", "video_path": "v1.mp4",
           "start_s": 30.0, "end_s": 38.0, "options": list("abcdefg"), "answer": "A"}
    (tmp_path / "items.jsonl").write_text(json.dumps(rec) + "\n")
    item = load_items(tmp_path / "items.jsonl")[0]
    _video(tmp_path / "v1.mp4", 20.0, 5.0)
    with pytest.raises(VideoError, match="end_s is 38.0 s but the file is only 20.0 s"):
        sureon_prepare(item, tmp_path)


def test_surghi_timestamp_beyond_the_file_is_a_video_error(tmp_path):
    _video(tmp_path / "v1.mp4", 20.0, 5.0)
    row = FrameRow("D", "v1", 50, "p", "s", 50.0, "v1.mp4")
    with pytest.raises(VideoError, match="timestamp_s is 50.0 s"):
        surghi_prepare(row, tmp_path)
    assert len(surghi_prepare(FrameRow("D", "v1", 10, "p", "s", 10.0, "v1.mp4"), tmp_path).plan) == 9
