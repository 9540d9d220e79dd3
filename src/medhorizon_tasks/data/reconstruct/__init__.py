"""Rebuilding the video root from the upstream downloads: ``videos check`` and ``videos link``.

The release points at videos it cannot redistribute. For every video the data
reference, this package finds the user's upstream copy (by the source's layout
in :mod:`..sources`), places it where ``video_path`` says, and checks it with
the same pre-flight that every lmms-eval and VLMEvalKit run does
(:func:`medhorizon_tasks.benchmarks.videos.check_videos`: presence, containment,
indexability, duration against the data), plus what only a reconstruction
needs: a decode of the first, middle and last frames, the frame count and
rate against the data, and optionally a SHA-256.

Decisions (the README and the dataset card say the same):

* **Links, not copies.** A video file is hard-linked into the root, or linked
  by a relative symlink when the download already lies inside the root.
  A symlink leaving the root would be refused by every run
  (:func:`medhorizon_tasks.core.paths.resolve_video_path`: no pointer may lead out
  of the video root), so it is never made. Across filesystems a hard link is
  impossible: the user is told to move the download under the root or pass
  ``copy=True`` (``--copy``). A video inside a zip part is extracted only with
  ``extract=True`` (``--extract``).
* **Frames-only sources are assembled, losslessly, once.** REAL-Colon and
  Galar ship JPEG / PNG frames (PitVQA's stand-in frames are PNG at 1 FPS).
  Each frame file becomes one packet, byte for byte, of an intra-only MJPEG /
  PNG track in an MP4 container, timed by its frame number at the source's
  rate (the release's ``fps``, or the layout's own rate): nothing is
  re-encoded, so the pixels are exactly the upstream images, every frame is a
  keyframe (exact random access), a gap in the numbering stays a gap in time,
  and the rest of the package -- the decoder, the frame cache, the native-video
  bridges that hand a file path to a model's own loader -- keeps its one code
  path: a video file read by PyAV. The cost is disk: the assembled file is as
  large as its frames (about 1 TB for all of REAL-Colon; only the videos the
  release uses are assembled), and the frames may be deleted afterwards (the
  file holds the same bytes: ``ffmpeg -i V.mp4 -c copy -f image2 %06d.jpg``
  gives them back). Re-encoding instead (FFV1, H.264 at qp 0) would cost
  hours of CPU and two to three times the JPEGs' size; reading frame folders
  through a second decoder interface would fork every reader of the package.
* **Never outside the root.** Every target is resolved by
  ``resolve_video_path`` (no absolute path, no ``..``, no symlink out of the
  root) before and after its folders are made; upstream names (zip members,
  frame files) never become target paths. Writes go to a temporary file in
  the target's folder, renamed into place, so an interrupted run leaves no
  half video.
* **Reruns resume.** A target that is present and passes the check is kept
  (the check is cached by file identity, so this costs a ``stat``); only
  missing or, with ``force=True``, failing videos are (re)made.
  ``.medhorizon_videos.json`` in the root records where each placed video came from (each entry added
  under a lock, so concurrent ``link`` runs keep every entry).
* **Blame by content.** A present video that fails the check is compared with its upstream copy by
  content identity (:mod:`medhorizon_tasks.core.file_identity`): the same bytes -> the upstream copy is
  affected (fetch it again); other bytes -> the root's copy is, and ``force=True`` replaces it.
* **Only the download folders.** A symlink in a download folder that leads out of it (or loops) is never
  used: nothing outside the folders given is linked into the root.

The package, one responsibility a module: :mod:`.find` (the upstream copies, by each source's layout),
:mod:`.place` (placing one video: links, copies, zip members, frames assembled into an MP4),
:mod:`.verify` (the checks and checksums), :mod:`.report` (what was found and done) and :mod:`.run`
(:func:`reconstruct`: one ``videos check`` or ``videos link`` over every video the data use), with
:mod:`.checksums` (reading and matching a ``--checksums`` list) and :mod:`.manifest` (the record of what
was placed).
"""

from .checksums import ChecksumList, read_checksums
from .find import Candidate, UpstreamIndex, scan_upstream
from .manifest import MANIFEST
from .place import ReconstructError, assemble_frames, frames_of
from .report import ReconstructReport, VideoReport
from .run import MODES, reconstruct

__all__ = ["MODES", "MANIFEST", "Candidate", "UpstreamIndex", "scan_upstream", "frames_of", "assemble_frames",
           "VideoReport", "ReconstructReport", "reconstruct", "read_checksums", "ChecksumList", "ReconstructError"]
