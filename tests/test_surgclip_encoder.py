"""The SurgCLIP(β) zero-shot encoder on a tiny random configuration built here (TimeSformer and BERT of two layers,
a word-level BERT vocab): loaded by name through the entry point from a local checkpoint and a local BERT folder,
its clip/text ranking is the model's own similarity (``SurgCLIP.forward``), and its preprocessing is the package's
(224-px frames normalised with mean = std = 0.5)."""

import json

import numpy as np
import pytest
import torch

from medhorizon_tasks.adapters.encoders import load_encoder
from medhorizon_tasks.adapters.encoders.surgclip import SurgCLIPEncoder, surgclip_modules
from medhorizon_tasks.core.errors import MedHorizonError

WORDS = ["clipping", "dissection", "suturing", "the", "cystic", "duct", "phase", "step", "a", "of"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import BertConfig, BertModel

    root = tmp_path_factory.mktemp("surgclip")
    vit = {"embed_dim": 32, "depth": 2, "num_heads": 2, "mlp_ratio": 2, "qkv_bias": True, "drop_rate": 0.0,
           "attn_drop_rate": 0.0, "drop_path_rate": 0.0, "img_size": 32, "patch_size": 16}
    (root / "vit.json").write_text(json.dumps(vit))
    bert = BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=80)
    bert.to_json_file(root / "bert.json")
    torch.manual_seed(0)
    BertModel(bert, add_pooling_layer=False).save_pretrained(root / "bert")
    (root / "bert" / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    args = dict(bert=str(root / "bert"), vision_config=str(root / "vit.json"), text_config=str(root / "bert.json"),
                image_res=32, embed_dim=16, num_frames=4)
    reference = SurgCLIPEncoder(random_init=True, **args)  # a random model: its weights become the checkpoint
    torch.save(reference.model.state_dict(), root / "surgclip_tiny.pth")
    return root, args, reference


def _clips(n=3, t=4, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=(n, t, 40, 48, 3), dtype=np.uint8)


def test_loaded_by_name_from_a_local_checkpoint(tiny):
    root, args, reference = tiny
    enc = load_encoder("surgclip", device="cpu", dtype="float32",
                       args={**args, "checkpoint": str(root / "surgclip_tiny.pth")})
    assert isinstance(enc, SurgCLIPEncoder) and enc.kind == "video" and enc.similarity == "cosine"
    clips = _clips()
    assert torch.allclose(enc.encode_clips(clips), reference.encode_clips(clips), atol=1e-6), "the checkpoint's weights"
    texts = ["clipping the cystic duct", "dissection", "suturing"]
    assert enc.encode_text(texts).shape == (3, 16) and enc.encode_clips(clips).shape == (3, 16)


def test_ranking_is_the_models_own_similarity(tiny):
    _, args, enc = tiny
    clips, texts = _clips(4, seed=1), ["clipping", "dissection of the duct", "suturing", "a phase"]
    ours = torch.nn.functional.normalize(enc.encode_clips(clips), dim=-1) @ torch.nn.functional.normalize(
        enc.encode_text(texts), dim=-1).T
    tokens = enc.tokenizer(texts, padding="max_length", truncation=True, max_length=77, return_tensors="pt")
    with torch.no_grad():
        sim_v2t, _ = enc.model(enc.pixels(clips), tokens)
    assert torch.equal(ours.argmax(dim=1), sim_v2t.argmax(dim=1))
    # per clip, the two differ by one positive factor (the norm of the mean of normalised frame embeddings)
    ratio = (sim_v2t * enc.model.temp) / ours
    assert torch.allclose(ratio, ratio[:, :1].expand_as(ratio), atol=1e-4) and bool((ratio > 0).all())


def test_preprocessing_is_the_packages():
    from PIL import Image

    surgclip_modules()
    from surgclip.transforms import get_preprocess

    frame = np.random.default_rng(2).integers(0, 256, size=(40, 48, 3), dtype=np.uint8)
    theirs = get_preprocess(32)(Image.fromarray(frame))
    ours = SurgCLIPEncoder.pixels(type("E", (), {"_torch": torch, "image_res": 32})(), frame[None, None])[0, 0]
    assert ours.shape == theirs.shape == (3, 32, 32)
    assert float((ours - theirs).abs().mean()) < 0.03, "bicubic resize, (x - 0.5) / 0.5"


def test_a_checkpoint_is_required_and_must_be_surgclips(tiny, tmp_path):
    _, args, _ = tiny
    with pytest.raises(MedHorizonError, match="checkpoint=PATH"):
        SurgCLIPEncoder(**args)
    torch.save({"something.else": torch.zeros(1)}, tmp_path / "other.pth")
    with pytest.raises(MedHorizonError, match="none of SurgCLIP's weights"):
        SurgCLIPEncoder(checkpoint=str(tmp_path / "other.pth"), **args)
    assert surgclip_modules()[0].__name__ == "SurgCLIP"
