"""Local model folders for MiniCPM-V 2.6, VideoChat-Flash and Hulu-Med that load through transformers' REAL
remote-code path (``trust_remote_code=True``), offline.

Their real code is on the model hub; each folder here holds what such a repository holds: a ``config.json``
whose ``auto_map`` names classes in Python files of the folder (and, for Hulu-Med, a ``processor_config.json``
naming its processor), a real tiny tokenizer (tests/tiny_vlm.py) and a one-weight safetensors file. The Python
files are the recording stand-ins of tests/remote_code/ (each implements that model's documented interface and
appends what it receives to the file named by ``MEDHORIZON_REMOTE_SPY``); every stand-in answers ``ANSWER``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import tiny_vlm

STANDINS = Path(__file__).parent / "remote_code"
ANSWER = "B"
SPY_ENV = "MEDHORIZON_REMOTE_SPY"


def _folder(folder: Path, files: list[str], auto_map: dict, architecture: str, **config) -> Path:
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("recording.py", *files):
        shutil.copy(STANDINS / name, folder / name)
    tok = tiny_vlm.tokenizer()
    tok.save_pretrained(folder)
    config = {"model_type": "medhorizon_recording", "architectures": [architecture], "torch_dtype": "float32",
              "auto_map": {"AutoConfig": "recording.RecordingConfig", **auto_map}, "answer": ANSWER,
              "answer_token_id": tok.convert_tokens_to_ids(ANSWER), **config}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    save_file({"weight": torch.zeros(1)}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def build_minicpm_v(folder: Path) -> Path:
    """lmms-eval's ``minicpm_v`` wrapper loads it with ``AutoModel`` / ``AutoTokenizer`` (trust_remote_code)."""
    return _folder(folder, ["modeling_minicpmv.py"], {"AutoModel": "modeling_minicpmv.MiniCPMV"}, "MiniCPMV")


def build_videochat_flash(folder: Path) -> Path:
    """lmms-eval's ``videochat_flash`` wrapper loads it with ``AutoModel`` / ``AutoTokenizer`` (trust_remote_code);
    its video encoder takes frames in groups of ``mm_local_num_frames`` (4, as the released config)."""
    cls = "VideoChatFlashQwenForCausalLM"
    return _folder(folder, ["modeling_videochat_flash.py"], {"AutoModel": f"modeling_videochat_flash.{cls}"}, cls,
                   mm_local_num_frames=4)


def build_hulu_med(folder: Path) -> Path:
    """Loaded as lmms-eval's ``videollama3`` wrapper loads a model: ``AutoModelForCausalLM`` and ``AutoProcessor``
    (trust_remote_code); the processor's ``auto_map`` is in ``processor_config.json``."""
    cls = "HuluMedQwen3ForCausalLM"
    tok = tiny_vlm.tokenizer()
    folder = _folder(folder, ["modeling_hulu_med.py", "processing_hulu_med.py"],
                     {"AutoModelForCausalLM": f"modeling_hulu_med.{cls}"}, cls,
                     image_token_id=tok.convert_tokens_to_ids("<|image_pad|>"))
    (folder / "processor_config.json").write_text(json.dumps(
        {"auto_map": {"AutoProcessor": "processing_hulu_med.HuluMedProcessor"}}, indent=2), encoding="utf-8")
    return folder


def spy_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()] if Path(path).exists() \
        else []


def frame_digests(frames) -> list[str]:
    """The digests the stand-ins record (recording.frame_facts) of decoded frames."""
    import hashlib

    import numpy as np

    return [hashlib.sha1(np.ascontiguousarray(np.asarray(f), dtype=np.uint8).tobytes()).hexdigest() for f in frames]
