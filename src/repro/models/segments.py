"""BERT's token-type (segment) embeddings for sentence-pair inputs ``[CLS] A [SEP] B``.

`SegmentTransformer` is a `Transformer` that adds a learned segment embedding to every
token: a token's segment is the number of separator tokens strictly before it, capped at
``n_segments - 1``. So in ``[CLS] A [SEP] B`` the CLS token, A and the SEP are segment 0 and
B is segment 1, exactly BERT's token_type_ids; single-sentence inputs (no separator) are all
segment 0. Deriving the segments from the ids keeps the model's call signature (and every
task, hook, head mask and `prune_heads`) unchanged.

Without segments, a bidirectional model can hardly tell whether a hypothesis word also occurs
in the premise: attending to identical tokens returns the same value vector whether the match
is the token itself or a copy in the other sentence.
"""

from __future__ import annotations

import torch
from torch import nn

from repro.models.config import TransformerConfig
from repro.models.transformer import Transformer


def segment_ids(input_ids: torch.Tensor, sep_id: int, n_segments: int = 2) -> torch.Tensor:
    """[B,T] -> [B,T] segment of each token: separators strictly before it, capped at n_segments-1."""
    is_sep = (input_ids == sep_id).long()
    before = is_sep.cumsum(dim=1) - is_sep
    return before.clamp(max=n_segments - 1)


class SegmentTransformer(Transformer):
    """A `Transformer` with token-type embeddings derived from separator tokens (see module docstring)."""

    def __init__(self, cfg: TransformerConfig, sep_id: int, n_segments: int = 2) -> None:
        if n_segments < 1:
            raise ValueError(f"n_segments={n_segments} must be >= 1")
        if not 0 <= sep_id < cfg.vocab_size:
            raise ValueError(f"sep_id={sep_id} is not a token id of the vocabulary (size {cfg.vocab_size})")
        super().__init__(cfg)
        self.sep_id = sep_id
        self.n_segments = n_segments
        self.seg_emb = nn.Embedding(n_segments, cfg.d_model)
        nn.init.normal_(self.seg_emb.weight, std=cfg.init_std)
        self.name_hook_points()

    def embed(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """[B,T] -> [B,T,d]; segments come from the separators unless ``token_type_ids`` [B,T] are given."""
        T = input_ids.shape[1]
        if T > self.cfg.max_seq_len and self.cfg.position in ("learned", "sinusoidal"):
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.cfg.max_seq_len}")
        segments = segment_ids(input_ids, self.sep_id, self.n_segments) if token_type_ids is None else token_type_ids
        x = self.tok_emb(input_ids) + self.seg_emb(segments)
        if self.cfg.position == "learned":
            x = x + self.pos_emb.weight[:T]
        elif self.cfg.position == "sinusoidal":
            x = x + self.pos_table[:T].to(x.dtype)
        return self.hook_embed(self.emb_dropout(x))
