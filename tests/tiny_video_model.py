"""A tiny randomly initialised video dual encoder, saved whole with ``torch.save`` by the README example's test
(unpickling needs this module importable, as a user's checkpoint needs their model's module)."""

from __future__ import annotations

import torch
from torch import nn


class TinyVideoModel(nn.Module):
    """Text: a bag of byte embeddings; video ``(N, T, 3, H, W)``: the clip's mean colour and its change over time,
    projected."""

    def __init__(self, dim: int = 8, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.text = nn.EmbeddingBag(256, dim, mode="mean")
        self.video = nn.Linear(6, dim)

    def encode_text(self, texts: list[str]) -> torch.Tensor:
        ids = [torch.tensor(list(t.encode()[:64]) or [0]) for t in texts]
        offsets = torch.tensor([0, *torch.cumsum(torch.tensor([len(i) for i in ids]), 0)[:-1].tolist()])
        return self.text(torch.cat(ids), offsets)

    def encode_video(self, x: torch.Tensor) -> torch.Tensor:
        colour = x.mean(dim=(1, 3, 4))
        change = (x[:, -1] - x[:, 0]).mean(dim=(2, 3))
        return self.video(torch.cat([colour, change], dim=1).to(self.video.weight.dtype))
