"""Recording stand-in for Hulu-Med's remote model (``AutoModelForCausalLM``, trust_remote_code): the README's
``model.generate(**inputs, max_new_tokens=..., modals=[...])`` on the processor's inputs, answering only the new
tokens (the real model generates from input embeddings). It records what it got and answers the config's
``answer_token_id``.
"""

import torch

from .recording import RecordingModel, record


class HuluMedQwen3ForCausalLM(RecordingModel):
    def generate(self, input_ids=None, attention_mask=None, pixel_values=None, modals=None, **kwargs):
        image_token_id = self.config.image_token_id
        record("generate", modals=modals, image_tokens=int((input_ids == image_token_id).sum()),
               pixel_values=None if pixel_values is None else {"shape": list(pixel_values.shape),
                                                              "dtype": str(pixel_values.dtype)},
               input_device=str(input_ids.device), max_new_tokens=kwargs.get("max_new_tokens"),
               do_sample=kwargs.get("do_sample"))
        return torch.full((input_ids.shape[0], 1), self.config.answer_token_id, dtype=torch.long)
