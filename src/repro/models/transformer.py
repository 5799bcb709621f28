"""The model family: a decoder, encoder or classifier (`Transformer`) and an
encoder-decoder for translation (`EncoderDecoder`).

Top-level hook points: ``hook_embed`` (token + position embedding, [B,T,d]),
``hook_resid_final`` (the residual stream before the final norm), ``hook_pooled``
(the pooled token of a classifier). Block and attention hooks are listed in
`repro.models.blocks` and `repro.models.attention`.

Head masks: a [n_layers, max_heads] float tensor (1 keeps a head, 0 removes it),
or [n_layers, B, max_heads, T] for per-token masks; column h of a layer is that
layer's original head h. An encoder-decoder takes a dict with keys
``enc_self``, ``dec_self`` and ``cross``, one such tensor each.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from repro.models.blocks import Block
from repro.models.config import TransformerConfig, config_from_dict
from repro.models.hooks import HookedModule, HookPoint
from repro.models.layers import make_norm, sinusoidal_table

ATTENTION_TYPES = ("enc_self", "dec_self", "cross")


def segment_ids(input_ids: torch.Tensor, sep_id: int, n_segments: int = 2) -> torch.Tensor:
    """[B,T] -> [B,T] segment of each token: the separators strictly before it, capped at n_segments-1.
    In ``[CLS] A [SEP] B`` the CLS token, A and the SEP are segment 0 and B is segment 1 (BERT's
    token_type_ids); inputs without a separator are all segment 0. Deriving the segments from the ids
    keeps the model's call signature (and every task, hook, head mask and `prune_heads`) unchanged."""
    is_sep = (input_ids == sep_id).long()
    before = is_sep.cumsum(dim=1) - is_sep
    return before.clamp(max=n_segments - 1)


class Transformer(HookedModule):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.tok_emb = nn.Embedding(cfg.vocab_size, d)
        if cfg.position == "learned":
            self.pos_emb = nn.Embedding(cfg.max_seq_len, d)
        elif cfg.position == "sinusoidal":
            self.register_buffer("pos_table", sinusoidal_table(cfg.max_seq_len, d), persistent=False)
        if cfg.n_token_types:
            self.type_emb = nn.Embedding(cfg.n_token_types, d)
        if cfg.embed_norm:
            self.embed_norm = make_norm(cfg.norm if cfg.norm != "none" else "layernorm", d, cfg.norm_eps)
        self.emb_dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(cfg.n_layers))
        self.final_norm = make_norm(cfg.final_norm_type, d, cfg.norm_eps) if cfg.final_norm else None
        if cfg.output == "lm" and not cfg.tie_embeddings:
            self.lm_head = nn.Linear(d, cfg.vocab_size, bias=cfg.lm_head_bias)
        elif cfg.output == "lm" and cfg.lm_head_bias:  # tied unembedding plus its own bias
            self.lm_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        if cfg.output == "classifier":
            self.pooler = nn.Linear(d, d) if cfg.pooler else None
            self.cls_dropout = nn.Dropout(cfg.dropout)
            self.classifier = nn.Linear(d, cfg.n_classes)
        self.hook_embed = HookPoint()
        self.hook_resid_final = HookPoint()
        self.hook_pooled = HookPoint()
        self._init_weights()
        if cfg.block_spec.reparam_tie == "last":
            self._tie_last_projection_to_chain()
        self.name_hook_points()

    def _init_weights(self) -> None:
        """N(0, init_std²) for embeddings and plain linear layers, zero biases.

        Attention initialises its own matrices (zero queries, orthogonal or identity
        values), so only the modules created here are touched.
        """
        std = self.cfg.init_std
        linears = [blk.mlp.fc_in for blk in self.blocks] + [blk.mlp.fc_out for blk in self.blocks]
        linears += [getattr(self, n) for n in ("lm_head", "pooler", "classifier") if getattr(self, n, None) is not None]
        embeddings = [self.tok_emb] + [getattr(self, n) for n in ("pos_emb", "type_emb") if hasattr(self, n)]
        for module in linears + embeddings:
            nn.init.normal_(module.weight, std=std)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    @torch.no_grad()
    def _tie_last_projection_to_chain(self) -> None:
        """LL-tied (Fig 15, official `tie_valproj_init="last_block"`): W^P_L,init = (V_L P_{L-1} ... P_1 V_1)ᵀ
        over the initial matrices, so the product of all of them is the identity when they are orthogonal."""
        chain = None
        for layer, block in enumerate(self.blocks):
            factors = [block.attn.value] if layer == len(self.blocks) - 1 else [block.attn.value, block.attn.proj]
            for matrix_map in factors:
                w = matrix_map.initial_matrix()
                chain = w if chain is None else w @ chain
        self.blocks[-1].attn.proj.set_initial_matrix(chain.T)

    # -- forward --------------------------------------------------------------------
    def embed(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """[B,T] -> [B,T,d]. token_type_ids [B,T] (models with n_token_types) default to the types the
        separators give (`type_sep_id`), else to type 0."""
        T = input_ids.shape[1]
        if T > self.cfg.max_seq_len and self.cfg.position in ("learned", "sinusoidal"):
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.cfg.max_seq_len}")
        x = self.tok_emb(input_ids)
        if self.cfg.position == "learned":
            x = x + self.pos_emb.weight[:T]
        elif self.cfg.position == "sinusoidal":
            x = x + self.pos_table[:T].to(x.dtype)
        if self.cfg.n_token_types:
            if token_type_ids is None and self.cfg.type_sep_id is not None:
                token_type_ids = segment_ids(input_ids, self.cfg.type_sep_id, self.cfg.n_token_types)
            x = x + (self.type_emb.weight[0] if token_type_ids is None else self.type_emb(token_type_ids))
        elif token_type_ids is not None:
            raise ValueError("token_type_ids were given but the model has n_token_types=0")
        if self.cfg.embed_norm:
            x = self.embed_norm(x)
        return self.hook_embed(self.emb_dropout(x))

    def forward(
        self,
        input_ids: torch.Tensor,  # [B,T]
        *,
        head_mask: torch.Tensor | None = None,
        padding_mask: torch.Tensor | None = None,  # [B,T] bool, True = real token
        memory: torch.Tensor | None = None,  # [B,Ts,d] encoder output (decoder only)
        memory_padding_mask: torch.Tensor | None = None,
        cross_head_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,  # [B,T] segment ids (models with n_token_types)
    ) -> torch.Tensor:
        x = self.embed(input_ids, token_type_ids)
        for layer, block in enumerate(self.blocks):
            x = block(
                x,
                head_mask=None if head_mask is None else head_mask[layer],
                padding_mask=padding_mask,
                memory=memory,
                memory_padding_mask=memory_padding_mask,
                cross_head_mask=None if cross_head_mask is None else cross_head_mask[layer],
            )
        x = self.hook_resid_final(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.head(x, padding_mask)

    def head(self, x: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Map final hidden states [B,T,d] to the configured output."""
        if self.cfg.output == "lm":
            return self.unembed(x)  # [B,T,V]
        if self.cfg.output == "none":
            return x  # [B,T,d]
        pooled = self.hook_pooled(self.pool(x, padding_mask))  # [B,d]
        if self.pooler is not None:
            pooled = torch.tanh(self.pooler(pooled))
        return self.classifier(self.cls_dropout(pooled))  # [B,C]

    def unembed(self, x: torch.Tensor) -> torch.Tensor:
        if not self.cfg.tie_embeddings:
            return self.lm_head(x)
        return F.linear(x, self.tok_emb.weight, getattr(self, "lm_bias", None))

    def pool(self, x: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        kind = self.cfg.pool
        if kind == "first":
            return x[:, 0]
        if kind == "last":
            if padding_mask is None:
                return x[:, -1]
            last = padding_mask.long().sum(dim=1) - 1
            return x[torch.arange(x.shape[0], device=x.device), last]
        if padding_mask is None:
            return x.mean(dim=1)
        weights = padding_mask.to(x.dtype).unsqueeze(-1)
        return (x * weights).sum(dim=1) / weights.sum(dim=1)

    # -- structure ------------------------------------------------------------------
    def full_head_mask(self, dtype=torch.float32) -> torch.Tensor:
        """An all-ones head mask [n_layers, max_heads] for this model's original heads."""
        return torch.ones(self.cfg.n_layers, max(self.cfg.n_heads), dtype=dtype)


class EncoderDecoder(HookedModule):
    """Translation model: a bidirectional encoder and a causal decoder with cross-attention."""

    def __init__(self, encoder_cfg: TransformerConfig, decoder_cfg: TransformerConfig, share_embeddings: bool = True):
        super().__init__()
        if encoder_cfg.output != "none" or encoder_cfg.causal:
            raise ValueError("the encoder config needs output='none' and causal=False")
        if not decoder_cfg.cross_attention or decoder_cfg.output != "lm":
            raise ValueError("the decoder config needs cross_attention=True and output='lm'")
        self.encoder = Transformer(encoder_cfg)
        self.decoder = Transformer(decoder_cfg)
        if share_embeddings:
            if encoder_cfg.vocab_size != decoder_cfg.vocab_size:
                raise ValueError("shared embeddings need equal encoder and decoder vocab sizes")
            self.decoder.tok_emb = self.encoder.tok_emb
        self.name_hook_points()

    def encode(self, src_ids, src_padding_mask=None, head_mask=None) -> torch.Tensor:
        enc_mask = None if head_mask is None else head_mask.get("enc_self")
        return self.encoder(src_ids, head_mask=enc_mask, padding_mask=src_padding_mask)

    def decode(self, tgt_ids, memory, src_padding_mask=None, tgt_padding_mask=None, head_mask=None) -> torch.Tensor:
        head_mask = head_mask or {}
        return self.decoder(
            tgt_ids,
            head_mask=head_mask.get("dec_self"),
            padding_mask=tgt_padding_mask,
            memory=memory,
            memory_padding_mask=src_padding_mask,
            cross_head_mask=head_mask.get("cross"),
        )

    def forward(self, src_ids, tgt_ids, *, head_mask=None, src_padding_mask=None, tgt_padding_mask=None):
        """Teacher-forced logits [B,Tt,V] for decoder inputs tgt_ids."""
        memory = self.encode(src_ids, src_padding_mask, head_mask)
        return self.decode(tgt_ids, memory, src_padding_mask, tgt_padding_mask, head_mask)

    @torch.no_grad()
    def greedy_decode(self, src_ids, bos_id: int, eos_id: int, max_len: int, src_padding_mask=None, head_mask=None):
        """Greedy decoding (the head mask acts at every step). Returns [B, ≤max_len]
        token ids without BOS; positions after EOS are filled with eos_id."""
        memory = self.encode(src_ids, src_padding_mask, head_mask)
        out = torch.full((src_ids.shape[0], 1), bos_id, dtype=torch.long, device=src_ids.device)
        done = torch.zeros(src_ids.shape[0], dtype=torch.bool, device=src_ids.device)
        for _ in range(max_len):
            logits = self.decode(out, memory, src_padding_mask, None, head_mask)[:, -1]
            next_tok = logits.argmax(dim=-1).masked_fill(done, eos_id)
            out = torch.cat([out, next_tok[:, None]], dim=1)
            done |= next_tok == eos_id
            if bool(done.all()):
                break
        return out[:, 1:]

    def full_head_mask(self) -> dict[str, torch.Tensor]:
        enc, dec = self.encoder.cfg, self.decoder.cfg
        return {
            "enc_self": torch.ones(enc.n_layers, max(enc.n_heads)),
            "dec_self": torch.ones(dec.n_layers, max(dec.n_heads)),
            "cross": torch.ones(dec.n_layers, max(dec.n_heads)),
        }


def build_model(cfg: TransformerConfig | dict) -> Transformer:
    """A `Transformer` from a config or a plain dict (seed the RNG first for a fixed init)."""
    if isinstance(cfg, dict):
        cfg = config_from_dict(cfg)
    return Transformer(cfg)
