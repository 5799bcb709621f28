"""Head importance I_h = E_x |Att_h(x)ᵀ ∂L(x)/∂Att_h(x)| (Michel et al. 2019, §4.1; Molchanov et al. 2017).

Computed as the official code does (catalog sixteen_heads.md §1 and §4.2-4.4), in one backward
pass per batch through a per-token head mask ξ of ones, [layers, B, heads, T] per attention type:
since the model multiplies each head's context by ξ before W^O, ∂L/∂ξ[l,b,h,t] is the dot product
of the context of head h at token t with its gradient. Then

    I[l,h] = Σ_{b, t real} |∂L/∂ξ[l,b,h,t]|      (absolute value per token, padding excluded),

with the model in eval mode (no dropout) and L the *training* loss on gold targets, summed over
examples (and over target tokens for translation), so the result does not depend on batching.
`normalize_by_layer` divides each (type, layer) row by its L2 norm; global pruning ranks heads by
the normalised scores. Raw sums are also returned with the number of real tokens per type.
The passes run on the device of the model (each batch is moved there); the sums come back to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import torch
import torch.nn.functional as F

from repro.analysis import heads as H
from repro.analysis.device import model_device
from repro.models import EncoderDecoder
from repro.training.tasks import IGNORE_INDEX, label_smoothed_nll

LossFn = Callable[[torch.nn.Module, dict, object], torch.Tensor]


def classification_loss_sum(model, batch: dict, head_mask) -> torch.Tensor:
    """Cross-entropy on gold labels, summed over the batch (BERT's training loss)."""
    logits = model(batch["input_ids"], padding_mask=batch.get("padding_mask"), head_mask=head_mask)
    return F.cross_entropy(logits, batch["labels"], reduction="sum")


def language_model_loss_sum(model, batch: dict, head_mask) -> torch.Tensor:
    """Next-token cross-entropy of a decoder, summed over the predicted tokens (labels as made by the
    library's LanguageModelTask: the inputs shifted left, IGNORE_INDEX where there is nothing to predict)."""
    logits = model(batch["input_ids"], head_mask=head_mask)
    labels = batch["labels"]
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
    )


def translation_loss_sum(label_smoothing: float, pad_id: int) -> LossFn:
    """Label-smoothed cross-entropy (fairseq's formula) with teacher forcing, summed over target tokens."""

    def loss(model, batch: dict, head_mask) -> torch.Tensor:
        logits = model(
            batch["src_ids"],
            batch["tgt_ids"],
            head_mask=head_mask,
            src_padding_mask=batch.get("src_padding_mask"),
            tgt_padding_mask=batch.get("tgt_padding_mask"),
        )
        labels = batch["labels"]
        mean = label_smoothed_nll(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), label_smoothing, pad_id)
        return mean * (labels != pad_id).sum()

    return loss


def _real_tokens(model, batch: dict) -> dict[str, torch.Tensor]:
    """{type: BoolTensor [B, T]} of the query positions that are real tokens."""
    if isinstance(model, EncoderDecoder):
        src, tgt = batch["src_ids"], batch["tgt_ids"]
        src_real = batch.get("src_padding_mask", torch.ones_like(src, dtype=torch.bool))
        tgt_real = batch.get("tgt_padding_mask", torch.ones_like(tgt, dtype=torch.bool))
        return {"enc_self": src_real, "cross": tgt_real, "dec_self": tgt_real}
    ids = batch["input_ids"]
    return {H.SELF: batch.get("padding_mask", torch.ones_like(ids, dtype=torch.bool))}


def head_importance(
    model, batches: Iterable[dict], loss_fn: LossFn, dtype: torch.dtype = torch.float32
) -> tuple[dict[str, torch.Tensor], dict[str, int]]:
    """Raw importance {type: float64 [layers, max_heads]} summed over ``batches``, and the number of
    real tokens per type. ``batches`` are dicts as made by the library's ClassificationTask or
    Seq2SeqTask; ``loss_fn(model, batch, head_mask)`` returns the summed training loss."""
    was_training = model.training
    model.eval()
    device = model_device(model)
    full = H.full_masks(model)
    raw = {kind: torch.zeros(mask.shape, dtype=torch.float64) for kind, mask in full.items()}
    tokens = {kind: 0 for kind in full}
    try:
        for batch in batches:
            batch = {key: value.to(device) if torch.is_tensor(value) else value for key, value in batch.items()}
            real = _real_tokens(model, batch)
            # Per-token masks of ones [layers, B, heads, T] that the gradient flows into.
            per_token = {
                kind: torch.ones(
                    mask.shape[0],
                    *real[kind].shape[:1],
                    mask.shape[1],
                    real[kind].shape[1],
                    dtype=dtype,
                    device=device,
                    requires_grad=True,
                )
                for kind, mask in full.items()
            }
            loss = loss_fn(model, batch, H.model_mask(model, per_token))
            kinds = list(per_token)
            grads = torch.autograd.grad(loss, [per_token[k] for k in kinds], allow_unused=True)
            for kind, grad in zip(kinds, grads):
                if grad is None:
                    continue
                weight = real[kind][None, :, None, :].to(grad.dtype)  # [1,B,1,T]
                raw[kind] += (grad.abs() * weight).sum(dim=(1, 3)).double().cpu()
                tokens[kind] += int(real[kind].sum())
    finally:
        model.train(was_training)
    for kind, counts in ((k, H.heads_per_layer(model, k)) for k in raw):
        for layer, count in enumerate(counts):
            raw[kind][layer, count:] = float("nan")  # columns of heads a layer does not have
    return raw, tokens


def normalize_by_layer(importance: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each (type, layer) row divided by its L2 norm (NaN columns ignored; an all-zero row stays zero,
    where fairseq's code would give NaN and BERT's adds 1e-20 to the norm)."""
    out = {}
    for kind, scores in importance.items():
        scores = scores.clone()
        finite = torch.nan_to_num(scores, nan=0.0)
        norms = finite.pow(2).sum(dim=1, keepdim=True).sqrt()
        out[kind] = torch.where(norms > 0, scores / torch.where(norms > 0, norms, torch.ones_like(norms)), scores)
    return out


def importance_by_head(model, importance: Mapping[str, torch.Tensor]) -> dict[H.HeadId, float]:
    """{(type, layer, head): score} for every real head of ``model``."""
    return {(kind, layer, head): float(importance[kind][layer, head]) for kind, layer, head in H.all_heads(model)}
