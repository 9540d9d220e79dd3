"""Tiny, randomly initialised Qwen2.5-VL, Qwen3-VL, Gemma 4, Molmo2 and Gemma 3 checkpoints built offline (no
download), with transformers' real Gemma 4 / Molmo2 / Gemma 3 processors over the same tokenizer.

A byte-level BPE tokenizer without merges over the 256 byte symbols plus the
Qwen special tokens, Qwen2-VL's chat template, and configs of a few hundred
thousand parameters; ``save_pretrained`` writes model, tokenizer and processor
into a folder that lmms-eval's wrappers load by path.
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]

# Qwen2-VL's chat template (as vendored by VLMEvalKit), which Qwen2.5-VL and Qwen3-VL share for images and video
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.add_special_tokens({"additional_special_tokens": SPECIALS})
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _token_ids(tok) -> dict:
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    return dict(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])


def _text(tok, **extra) -> dict:
    return dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=1, max_position_embeddings=32768, bos_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **extra)


def _small_text(tok, **extra) -> dict:
    """The 32-wide, 2-layer text model of the Gemma 3 / Gemma 4 / Molmo2 builders."""
    return dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=1, head_dim=16, max_position_embeddings=4096, pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id, bos_token_id=tok.pad_token_id, **extra)


def _small_vision(**extra) -> dict:
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, **extra)


def build_qwen2_5_vl(folder: Path) -> Path:
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
    )
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    tok = tokenizer()
    config = Qwen2_5_VLConfig(
        text_config=_text(tok, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                "mrope_section": [4, 6, 6]}),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                           fullatt_block_indexes=[1]),
        **_token_ids(tok))
    processor = Qwen2_5_VLProcessor(image_processor=Qwen2VLImageProcessor(), tokenizer=tok,
                                    video_processor=Qwen2VLVideoProcessor(), chat_template=CHAT_TEMPLATE)
    return _save(folder, Qwen2_5_VLForConditionalGeneration(config), processor, tok)


def build_qwen3_vl(folder: Path) -> Path:
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tok = tokenizer()
    config = Qwen3VLConfig(
        text_config=_text(tok, head_dim=32, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                             "mrope_section": [4, 6, 6], "mrope_interleaved": True}),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=64,
                           deepstack_visual_indexes=[1]),
        **_token_ids(tok))
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(patch_size=16), tokenizer=tok,
                                 video_processor=Qwen3VLVideoProcessor(), chat_template=CHAT_TEMPLATE)
    return _save(folder, Qwen3VLForConditionalGeneration(config), processor, tok)


def _save(folder: Path, model, processor, tok) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


_GEMMA_TOKENS = {"image_token": "<|image|>", "boi_token": "<|boi|>", "eoi_token": "<|eoi|>",
                 "audio_token": "<|audio|>", "boa_token": "<|boa|>", "eoa_token": "<|eoa|>"}


# the tiny chat template with the Gemma 4 / Molmo2 placeholders: <|image|> for an image part, <|video|> for a video
TEMPLATE = (CHAT_TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", "<|image|>")
            .replace("<|vision_start|><|video_pad|><|vision_end|>", "<|video|>"))


def _tokenizer(names: dict):
    """The tiny byte-level tokenizer with named special tokens (``image_token`` ... and their ``*_id``), kept by
    ``save_pretrained`` as transformers 5's ``extra_special_tokens``."""
    from transformers import PreTrainedTokenizerFast

    base = tokenizer()
    base.add_special_tokens({"additional_special_tokens": [*SPECIALS, *names.values()]})
    tok = PreTrainedTokenizerFast(tokenizer_object=base.backend_tokenizer, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", extra_special_tokens=names)
    tok.chat_template = TEMPLATE  # also what save_pretrained writes as the folder's chat template
    return tok


def gemma4_processor():
    from transformers.models.gemma4 import Gemma4ImageProcessor, Gemma4Processor, Gemma4VideoProcessor
    from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor

    return Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(), image_processor=Gemma4ImageProcessor(),
                           tokenizer=_tokenizer(_GEMMA_TOKENS), video_processor=Gemma4VideoProcessor(),
                           chat_template=TEMPLATE)


def molmo2_processor():
    from transformers.models.molmo2 import Molmo2ImageProcessor, Molmo2Processor, Molmo2VideoProcessor

    tok = _tokenizer({"image_token": "<|image|>", "video_token": "<|video|>", "frame_start": "<frame_start>",
                      "frame_end": "<frame_end>", "im_start": "<im_start>", "im_end": "<im_end>",
                      "im_patch": "<im_patch>", "im_col": "<im_col>", "low_res_im_start": "<low_res_im_start>"})
    return Molmo2Processor(image_processor=Molmo2ImageProcessor(), video_processor=Molmo2VideoProcessor(),
                           tokenizer=tok, chat_template=TEMPLATE)


def build_gemma4(folder: Path) -> Path:
    from transformers import Gemma4Config, Gemma4ForConditionalGeneration

    processor = gemma4_processor()
    tok = processor.tokenizer
    ids = {name: tok.convert_tokens_to_ids(token) for name, token in _GEMMA_TOKENS.items()}
    config = Gemma4Config(
        text_config=_small_text(tok, vocab_size_per_layer_input=len(tok), hidden_size_per_layer_input=8,
                                sliding_window=64),
        vision_config=_small_vision(num_key_value_heads=2, head_dim=16),
        audio_config=None, boi_token_id=ids["boi_token"], eoi_token_id=ids["eoi_token"],
        image_token_id=ids["image_token"], video_token_id=tok.convert_tokens_to_ids("<|video|>"),
        boa_token_id=ids["boa_token"], eoa_token_index=ids["eoa_token"], audio_token_id=ids["audio_token"])
    return _save(folder, Gemma4ForConditionalGeneration(config), processor, tok)


def build_molmo2(folder: Path) -> Path:
    """A tiny Molmo2 (one-layer ViT at the video processor's 378 px / 14 px patches, 2-layer text model) with the
    real Molmo2 processor above."""
    from transformers import Molmo2Config, Molmo2ForConditionalGeneration

    processor = molmo2_processor()
    tok = processor.tokenizer
    ids = tok.convert_tokens_to_ids
    config = Molmo2Config(
        vision_config=_small_vision(num_key_value_heads=2, head_dim=16, image_size=[378, 378], patch_size=14),
        adapter_config=dict(vision_feature_layer=[-1], hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                            head_dim=16, intermediate_size=64, text_hidden_size=32),
        text_config=_small_text(tok, additional_vocab_size=0),
        image_start_token_id=ids("<im_start>"), low_res_image_start_token_id=ids("<low_res_im_start>"),
        image_end_token_id=ids("<im_end>"), image_patch_id=ids("<im_patch>"), frame_start_token_id=ids("<frame_start>"),
        frame_end_token_id=ids("<frame_end>"))
    return _save(folder, Molmo2ForConditionalGeneration(config), processor, tok)


_GEMMA3_TOKENS = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}

# Gemma 3's chat rules in a tiny template: the system text opens the first user turn, an image part is the
# begin-of-image token (the processor expands it), a text part is trimmed; the model answers in a "model" turn
GEMMA3_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set prefix = messages[0]['content'][0]['text'] + '\\n\\n' %}"
    "{% set turns = messages[1:] %}{% else %}{% set prefix = '' %}{% set turns = messages %}{% endif %}"
    "{% for message in turns %}<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{{ prefix if loop.first else '' }}{% if message['content'] is string %}{{ message['content'] | trim }}"
    "{% else %}{% for item in message['content'] %}{% if item['type'] == 'image' %}<start_of_image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] | trim }}{% endif %}{% endfor %}{% endif %}<end_of_turn>\n"
    "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
GEMMA3_IMAGE_TOKENS = 4  # a 28 px image of 7 px patches (4 x 4) pooled 2 x 2


def gemma3_processor():
    from transformers import Gemma3ImageProcessor, Gemma3Processor

    tok = _tokenizer(_GEMMA3_TOKENS)
    tok.chat_template = GEMMA3_TEMPLATE
    return Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 28, "width": 28}), tokenizer=tok,
                           chat_template=GEMMA3_TEMPLATE, image_seq_length=GEMMA3_IMAGE_TOKENS)


def build_gemma3(folder: Path) -> Path:
    """A tiny Gemma 3 (MedGemma 1.5's architecture) with the real Gemma 3 processor."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    processor = gemma3_processor()
    tok = processor.tokenizer
    ids = {name: tok.convert_tokens_to_ids(token) for name, token in _GEMMA3_TOKENS.items()}
    config = Gemma3Config(
        text_config=_small_text(tok, query_pre_attn_scalar=16, sliding_window=64),
        vision_config=_small_vision(image_size=28, patch_size=7),
        mm_tokens_per_image=GEMMA3_IMAGE_TOKENS, boi_token_index=ids["boi_token"], eoi_token_index=ids["eoi_token"],
        image_token_index=ids["image_token"])
    return _save(folder, Gemma3ForConditionalGeneration(config), processor, tok)
