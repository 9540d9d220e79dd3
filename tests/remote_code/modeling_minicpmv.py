"""Recording stand-in for MiniCPM-V 2.6's remote ``modeling_minicpmv.py``: its documented ``chat`` (model card,
video example): ``chat(image=None, msgs=[{"role": "user", "content": frames + [question]}], tokenizer=...,
use_image_id=False, max_slice_nums=2)``, frames as PIL images, no frame times; it returns the answer text.

Like the real ``chat`` it splits each message's content into images and text and prompts one
``(<image>./</image>)`` placeholder per image through the tokenizer's chat template; it records what it got and
answers the config's letter.
"""

from PIL import Image

from .recording import RecordingModel, frame_facts, record


class MiniCPMV(RecordingModel):
    def chat(self, image, msgs, tokenizer, processor=None, vision_hidden_states=None, max_new_tokens=2048,
             min_new_tokens=0, sampling=True, max_inp_length=8192, system_prompt="", stream=False,
             max_slice_nums=None, use_image_id=None, **kwargs):
        turns = []
        for msg in msgs:
            content = [msg["content"]] if isinstance(msg["content"], str) else msg["content"]
            images = [c for c in content if isinstance(c, Image.Image)]
            texts = [c for c in content if isinstance(c, str)]
            if len(images) + len(texts) != len(content):
                raise ValueError(f"MiniCPM-V: message content must be PIL images and text, got {content!r}")
            turns.append({"role": msg["role"], "images": images, "texts": texts,
                          "content": "(<image>./</image>)\n" * len(images) + "\n".join(texts)})
        prompt = tokenizer.apply_chat_template([{"role": t["role"], "content": t["content"]} for t in turns],
                                               tokenize=False, add_generation_prompt=True)
        frames = [im for t in turns for im in t["images"]]
        record("chat", frames=frame_facts(frames), image_is_none=image is None, roles=[t["role"] for t in turns],
               texts=turns[-1]["texts"], prompt=prompt,
               use_image_id=use_image_id, max_slice_nums=max_slice_nums, sampling=sampling,
               max_new_tokens=max_new_tokens, num_beams=kwargs.get("num_beams"),
               prompt_tokens=len(tokenizer(prompt)["input_ids"]))
        return self.config.answer
