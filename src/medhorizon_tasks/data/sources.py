"""The eight upstream sources of MedHorizon's videos, as data: one :class:`UpstreamSource` per source.

MedHorizon redistributes metadata and pointers only (``video_path``, relative
to a video root); every user rebuilds the videos from the sources' own
downloads, which come in different shapes. Each entry says, for one source:

* how the release names it (``name`` and ``aliases``: the records' ``dataset``
  field) and where its videos go under the root (``folder``, the first part
  of ``video_path``);
* how to find one video's upstream copy: ``target_id`` reads the video's id
  out of the release's file name, and each :class:`Layout` says how the
  upstream copy is named -- a video file, or a folder of frames (file
  names, frame numbering, frame rate) -- in the order they are tried;
* where and how to obtain it, under which licence (copied into every
  "missing" message, so a user is told exactly what to download).

Ids are compared in a normal form (:func:`normal_id`): the regex groups of a
match, numbers without their leading zeros, text upper-cased, joined by ``-``;
so ``real_colon/002-010.mp4`` and the folder ``002-010_frames`` are both
``2-10``, and ``BBP03.mp4`` and ``multibypass/bbp3.mp4`` are both ``B-3``.

Facts and their provenance are in ``shared/reference/upstream_datasets.md``;
what could not be verified is marked "(inferred)" in the entry's notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

__all__ = ["Layout", "UpstreamSource", "SOURCES", "source_named", "source_for_path", "normal_id", "target_id"]

VIDEO_SUFFIXES = ("mp4", "mkv", "avi", "mov", "m4v", "webm", "mpg", "mpeg", "ts")
_VIDEO_EXT = r"\.(?:" + "|".join(VIDEO_SUFFIXES) + r")$"


@dataclass(frozen=True)
class Layout:
    """One shape in which a source's download holds a video.

    ``kind``: ``"video"`` (one file per video; ``name`` matches the file's name) or ``"frames"``
    (one folder per video; ``name`` matches the folder's name, ``frame`` each frame file's name, whose
    group ``n`` is the frame number). The named groups of ``name`` form the video's id. All regexes are
    matched case-insensitively against the whole name. ``fps``: the frames' rate when the source fixes
    it (PitVQA's 1 FPS frames); ``None``: the rate the release gives for that video.
    """

    kind: str
    name: str
    frame: str = ""
    fps: float | None = None
    note: str = ""
    same_name: bool = False  # matched against the release's own file name, not the source's id

    def __post_init__(self):
        if self.kind not in ("video", "frames"):
            raise ValueError(f"layout kind must be 'video' or 'frames', got {self.kind!r}")
        if self.kind == "frames" and "(?P<n>" not in self.frame:
            raise ValueError("a frames layout needs a frame pattern with a group 'n' (the frame number)")

    def match_name(self, name: str) -> str | None:
        """The normal id of a file (kind video) or folder (kind frames) called ``name``, or None."""
        m = re.fullmatch(self.name, name, re.IGNORECASE)
        return normal_id(m) if m else None

    def frame_number(self, name: str) -> int | None:
        m = re.fullmatch(self.frame, name, re.IGNORECASE)
        return int(m.group("n")) if m else None


@dataclass(frozen=True)
class UpstreamSource:
    """Everything the package knows about one upstream source (see the module doc)."""

    name: str
    aliases: tuple[str, ...]
    folder: str
    target_id: str
    layouts: tuple[Layout, ...]
    licence: str
    access: str          # "open download" | "request form" | "registration" | "partly public" | "not found"
    homepage: str
    obtain: str          # how to get it, in steps
    packaging: str       # what arrives, in which files
    archives: tuple[str, ...] = ()   # glob patterns of the archives it ships (to spot a download not unpacked)
    citation: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def frames_only(self) -> bool:
        return all(layout.kind == "frames" for layout in self.layouts)

    @property
    def shape(self) -> str:
        kinds = {layout.kind for layout in self.layouts}
        return "frames only" if kinds == {"frames"} else "videos" if kinds == {"video"} else "videos or frames"

    def how_to_get(self) -> str:
        """One paragraph: licence, access, where, and what to pass to ``videos link``."""
        return (f"{self.name} ({self.licence}; {self.access}): {self.obtain} Then run `medhorizon-tasks videos "
                f"link --video-root ROOT --from \"{self.name}=FOLDER\"` with FOLDER the unpacked download.")


def normal_id(match: re.Match) -> str:
    """The regex groups of ``match`` (named ones when any), numbers without leading zeros, text upper-cased."""
    groups = [g for g in (match.groupdict().values() if match.groupdict() else match.groups()) if g is not None]
    if not groups:
        groups = [match.group(0)]
    return "-".join(str(int(g)) if g.isdigit() else g.upper() for g in groups)


def target_id(source: UpstreamSource | None, video_path: str, layout: Layout | None = None) -> str:
    """The normal id of the video that ``video_path`` (a release pointer) names, as ``layout`` would name
    it: ``target_id`` searched in its file stem, else (and for a same-name layout) the whole stem."""
    stem = PurePosixPath(video_path.replace("\\", "/")).stem
    if source is not None and not (layout is not None and layout.same_name):
        m = re.search(source.target_id, stem, re.IGNORECASE)
        if m:
            return normal_id(m)
    return normal_id(re.fullmatch(r"(?P<stem>.+)", stem, re.DOTALL))


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


# A video named as in the release (e.g. ``us_study/01-lus.mp4`` found as ``01-lus.mp4``): the last resort
# of every video source, and the only layout of a source whose naming is not documented.
_SAME_NAME = Layout("video", r"(?P<stem>.+)" + _VIDEO_EXT, note="a file named as the release's video_path",
                    same_name=True)

SOURCES: tuple[UpstreamSource, ...] = (
    UpstreamSource(
        name="AutoLaparo",
        aliases=("Auto-Laparo", "AutoLaparo Task1"),
        folder="autolaparo",
        target_id=r"(\d+)(?!.*\d)",
        layouts=(Layout("video", r"(?P<n>\d{1,2})" + _VIDEO_EXT, note="Task 1 videos NN.mp4 (01-21)"), _SAME_NAME),
        licence="CC BY-NC-SA 4.0",
        access="request form",
        homepage="https://autolaparo.github.io",
        obtain="Fill in the request form on https://autolaparo.github.io; the download link arrives by e-mail. "
               "Unpack Task 1 (21 hysterectomy videos, 25 fps, 1920x1080, 23 h in all).",
        packaging="Task 1: 21 videos NN.mp4 with 21 phase label files label_NN.txt (1 fps); split 01-10 / 11-14 / "
                  "15-21.",
        archives=("*.zip", "*.tar", "*.tar.gz", "*.tgz"),
        citation="Wang et al., AutoLaparo: A New Dataset of Integrated Multi-tasks for Image-guided Surgical "
                 "Automation in Laparoscopic Hysterectomy, MICCAI 2022.",
        notes=("File names NN.mp4 are inferred from the official t1_video2frame.py (it takes the first two "
               "characters of a name as the id).",),
    ),
    UpstreamSource(
        name="Galar",
        aliases=("GalarCapsule", "Galar capsule endoscopy"),
        folder="galar",
        target_id=r"(\d+)(?!.*\d)",
        layouts=(Layout("frames", r"(?P<n>\d{1,3})", r"frame_(?P<n>\d+)\.png",
                        note="PNG frames <vid>/frame_XXXXXX.PNG, one folder per video"),),
        licence="CC BY 4.0",
        access="open download",
        homepage="https://doi.org/10.25452/figshare.plus.25304616",
        obtain="Download the Galar capsule-endoscopy dataset from Figshare+ (article 25304616, see "
               "https://github.com/EKFZ-AI-Endoscopy/GalarCapsuleML) and unpack every video's frame archive.",
        packaging="80 videos as PNG frames <vid>/frame_XXXXXX.PNG (3,513,539 frames) and one label CSV per "
                  "video <id>.csv; videos 61 and up are the test set.",
        archives=("*.zip", "*.tar", "*.tar.gz", "*.tgz", "*.7z"),
        citation="Le Floch et al., Galar: a large multi-label video capsule endoscopy dataset, Scientific Data "
                 "(2025), s41597-025-05112-7.",
        notes=("Frames only: the videos are assembled losslessly from the PNG files (see medhorizon_tasks/data/reconstruct/).",
               "The frame rate is not documented upstream: the release's fps for each video is used."),
    ),
    UpstreamSource(
        name="GraSP",
        aliases=("GRASP", "PSI-AVA"),
        folder="grasp",
        target_id=r"CASE\s*_?(\d+)",
        layouts=(Layout("video", r"CASE_?(?P<n>\d{3})" + _VIDEO_EXT, note="raw videos from videos.tar.gz"),
                 Layout("frames", r"CASE_?(?P<n>\d{3})", r"(?P<n>\d+)\.jpg", fps=30.0,
                        note="GraSP_30fps frames CASE###/#########.jpg (numbered at 30 fps)"),
                 _SAME_NAME),
        licence="not stated upstream (code: MIT)",
        access="open download",
        homepage="https://github.com/BCV-Uniandes/GraSP",
        obtain="Download videos.tar.gz (raw videos; or the GraSP_30fps frame tarballs) from the GraSP Google "
               "Drive folder 16uGgYsQ2oohKo1-iSxOFWnFAPlGTtvb9 linked from https://github.com/BCV-Uniandes/GraSP, "
               "and unpack it (tar -xzf videos.tar.gz).",
        packaging="videos.tar.gz (raw videos), GraSP_30fps / GraSP_1fps frame tarballs CASE###/#########.jpg "
                  "(1280x800), raw_frames_1fps.tar.gz, 1fps_to_30fps_association.json, annotations/"
                  "grasp_long-term_{train,test,fold1,fold2}.json; test = CASE041-053.",
        archives=("*.tar.gz", "*.tgz", "*.tar", "*.zip"),
        citation="Ayobi et al., Pixel-Wise Recognition for Holistic Surgical Scene Understanding (GraSP), "
                 "Medical Image Analysis 2025.",
        notes=("The raw videos' file names are not documented: CASE###.<ext> is expected, or the release's own "
               "file name.",
               "Some cases may have another source frame rate (TAPIS treats CASE021/041/047/050/051/053 apart) "
               "(inferred): the 30 fps frames are timed by their 30 fps numbers."),
    ),
    UpstreamSource(
        name="MultiBypass",
        aliases=("MultiBypass140", "MultiBypass-140", "BernBypass70", "StrasBypass70", "StrasbyPass70"),
        folder="multibypass",
        target_id=r"(?P<site>[BS])BP\s*_?(?P<n>\d+)",
        layouts=(Layout("video", r"(?P<site>[BS])BP(?P<n>\d{2})" + _VIDEO_EXT,
                        note="BBPNN.mp4 (Bern) and SBPNN.mp4 (Strasbourg)"),),
        licence="CC BY-NC-SA 4.0",
        access="open download",
        homepage="https://github.com/CAMMA-public/MultiBypass140",
        obtain="Download https://s3.unistra.fr/camma_public/datasets/MultiBypass140/multibypass01.zip to "
               "multibypass05.zip (multibypass06.zip holds the IAE labels) and unzip each; the videos land in "
               "BernBypass70/videos and StrasBypass70/videos. (Or leave the zips as they are and pass --extract.)",
        packaging="Five zip parts multibypass01-05.zip with BernBypass70/videos/BBP01-70.mp4 and "
                  "StrasBypass70/videos/SBP01-70.mp4; labels/{bern,strasbourg}/labels_by70/*.mp4.json.",
        archives=("multibypass0[1-6].zip", "*.zip"),
        citation="Lavanchy et al., Challenges in multi-centric generalization: phase and step recognition in "
                 "Roux-en-Y gastric bypass surgery, IJCARS 2024.",
    ),
    UpstreamSource(
        name="PitVQA",
        aliases=("PitVis", "PitVis-2023", "PitVQA++"),
        folder="pitvqa",
        target_id=r"(\d+)(?!.*\d)",
        layouts=(Layout("video", r"video_(?P<n>\d{1,2})" + _VIDEO_EXT, note="PitVis videos video_NN.mp4"),
                 Layout("frames", r"video_(?P<n>\d{1,2})", r"(?P<n>\d+)\.png", fps=1.0,
                        note="PitVQA frames video_NN/NNNNN.png at 1 FPS (cropped, 224x224, blurred frames dropped)"),
                 _SAME_NAME),
        licence="CC BY-NC-ND 4.0 (PitVis videos)",
        access="registration",
        homepage="https://doi.org/10.5522/04/26531686",
        obtain="Get the 25 PitVis videos (UCL RDR doi 10.5522/04/26531686, registration via Synapse syn51232283; "
               "also the Hugging Face dataset UCL-WEISS/PitVis-2023). Only if the videos are out of reach, the "
               "PitVQA 1 FPS frames (UCL RDR doi 10.5522/04/27004666) can stand in: they are cropped and resized, "
               "so a model sees other pixels than the authors' runs.",
        packaging="PitVis: video_NN.mp4, annotations_NN.csv, map_steps.csv, map_instrument.csv, "
                  "video_encoder_details.txt. PitVQA: 1 FPS frames video_NN/NNNNN.png (109,173 frames).",
        archives=("*.zip", "*.tar.gz", "*.tgz"),
        citation="He et al., PitVQA: Image-grounded Text Embedding LLM for Visual Question Answering in Pituitary "
                 "Surgery, MICCAI 2024; Das et al., PitVis-2023 challenge, Medical Image Analysis 2025.",
        notes=("The PitVQA frames drop blurred frames: their numbers keep their time (a gap stays a gap).",),
    ),
    UpstreamSource(
        name="REAL-Colon",
        aliases=("REALColon", "REAL colon", "RealColon"),
        folder="real_colon",
        target_id=r"(?P<site>\d{3})-(?P<video>\d{3})",
        layouts=(Layout("frames", r"(?P<site>\d{3})-(?P<video>\d{3})_frames", r"\d{3}-\d{3}_(?P<n>\d+)\.jpe?g",
                        note="JPEG frames SSS-VVV_frames/SSS-VVV_<n>.jpg"),),
        licence="CC BY 4.0",
        access="open download",
        homepage="https://doi.org/10.25452/figshare.plus.22202866",
        obtain="Download the SSS-VVV_frames archives of the videos you need (and video_info.csv) from Figshare+ "
               "22202866 (https://github.com/cosmoimd/real-colon-dataset has figshare_dataset.py; about 1 TB in "
               "all) and unpack them (tar -xzf SSS-VVV_frames.tar.gz).",
        packaging="60 SSS-VVV_frames and 60 SSS-VVV_annotation archives (.tar.gz), video_info.csv (fps, "
                  "num_frames), lesion_info.csv; 2,757,723 frames of about 1240x1080.",
        archives=("*_frames.tar.gz", "*_frames.tar", "*.tar.gz", "*.zip"),
        citation="Biffi et al., REAL-Colon: A dataset for developing real-world AI applications in colonoscopy, "
                 "Scientific Data 2024 (arXiv:2403.02163).",
        notes=("Frames only: the videos are assembled losslessly from the JPEG files at the release's fps "
               "(video_info.csv gives the same rates).",),
    ),
    UpstreamSource(
        name="TMVP",
        aliases=("SurgFormer-TMVP", "Mitral valve"),
        folder="tmvp",
        target_id=r"(\d+)(?!.*\d)",
        layouts=(Layout("frames", r"(?P<n>\d{1,3})", r"(?:frame_?)?(?P<n>\d+)\.(?:jpe?g|png)",
                        note="frames/NNN/<n>.jpg"),
                 _SAME_NAME),
        licence="none stated",
        access="partly public",
        homepage="https://github.com/xmed-lab/SurgFormer",
        obtain="Only 5 demo test videos are public (Google Drive 1s-LWohw2sstuObwnl6gcz22BQz0PCnY6, linked from "
               "https://github.com/xmed-lab/SurgFormer); for the full set (57 videos) ask the authors (xmed-lab, "
               "HKUST).",
        packaging="frames/NNN/ with phase_annotations/NNN.txt and instrument_annotations/NNN.txt; 57 videos, "
                  "429K+ frames, 12 phases.",
        archives=("*.zip", "*.tar.gz", "*.tgz"),
        citation="Lan et al. 2025 (TMVP, thoracoscopic mitral valve plasty; code xmed-lab/SurgFormer), as cited by "
                 "MedHorizon.",
        notes=("The frame file naming is not documented: any numbered .jpg/.png file counts (inferred).",),
    ),
    UpstreamSource(
        name="US-Study",
        aliases=("US Study", "USStudy", "Farras 2024", "Farràs 2024"),
        folder="us_study",
        target_id=r"(?P<stem>.+)",
        layouts=(_SAME_NAME,),
        licence="unknown",
        access="not found",
        homepage="",
        obtain="No public download was found (Farràs et al. 2024, an ultrasound study). Ask the MedHorizon authors or "
               "the study's authors for the recordings, named as in the release (e.g. 01-lus.mp4).",
        packaging="unknown; the release names the files us_study/<id>-lus.mp4.",
        citation="Farràs et al. 2024 (ultrasound study, study-level labels), as cited by MedHorizon.",
    ),
)

_BY_KEY = {_key(alias): s for s in SOURCES for alias in (s.name, *s.aliases)}


def source_named(name: str | None) -> UpstreamSource | None:
    """The source a release calls ``name`` (its ``dataset`` field; case, spaces and punctuation ignored)."""
    return _BY_KEY.get(_key(name)) if name else None


def source_for_path(video_path: str) -> UpstreamSource | None:
    """The source whose folder ``video_path`` starts with, when the data name none."""
    head = PurePosixPath(video_path.replace("\\", "/")).parts[:1]
    return next((s for s in SOURCES if head and _key(head[0]) == _key(s.folder)), None)
