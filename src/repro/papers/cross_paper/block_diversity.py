"""Study 2: Diversity of Layers' lens on a decoder of any block (docs/decisions/0051-cross-paper-claims.md).

The residual stream telescopes for every block, h_L = h_0 + Σ_l (h_l − h_{l−1}), so the L+1 layer
increments are additive members (`repro.analysis.residual_stream.layer_increment_readouts`). Each is read
through the final norm frozen at the full stream and the whole unembedding, rescaled to the module form
(o_i = M·c_i, so that the members' mean is the model's logits), and decomposed against the one-hot next
token at every held-out position with a target (`repro.analysis.bias_diversity`): the average member
error B, the diversity D and the diversity share D / B.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from repro.analysis.bias_diversity import decompose, member_bias, member_diversity, module_form, onehot
from repro.analysis.residual_stream import layer_increment_readouts
from repro.training.tasks import IGNORE_INDEX

#: Identities checked on every batch: the telescoping sum and Σ contributions = logits (float64 rounding).
TOLERANCE = 1e-8


def decomposition(model, batches: Sequence[dict], device=None) -> tuple[dict, pd.DataFrame]:
    """(summary, members) of the decomposition over every position of `batches` that has a target.

    summary: bias, diversity, mse (means over positions), share = diversity / bias, positions,
    identity_error (max |MSE − (B − D)|, relative), stream_error and logit_error (the readout's identities).
    members: one row per member (position 0 = h_0, then one per layer): its mean bias ‖o_i − y‖² and its
    mean part of the diversity (1/M)‖o_i − ō‖²."""
    vocab = model.cfg.vocab_size
    sums = {"bias": 0.0, "diversity": 0.0, "mse": 0.0}
    member_sums, positions, identity, stream_error, logit_error = None, 0, 0.0, 0.0, 0.0
    readouts = layer_increment_readouts(model, (b["input_ids"] for b in batches), device=device)
    for batch, readout in zip(batches, readouts):
        labels = batch["labels"].reshape(-1).numpy()
        keep = labels != IGNORE_INDEX
        contributions = readout.contributions.reshape(-1, *readout.contributions.shape[2:]).cpu().numpy()[keep]
        members = module_form(contributions)  # [n, M, V]
        target = onehot(labels[keep], vocab)
        terms = decompose(members, target)
        for name in sums:
            sums[name] += float(getattr(terms, name).sum())
        scale = float(np.abs(terms.mse).max(initial=1.0))
        identity = max(identity, float(np.abs(terms.identity_residual).max(initial=0.0)) / scale)
        per_member = np.stack([member_bias(members, target).sum(axis=0), member_diversity(members).sum(axis=0)])
        member_sums = per_member if member_sums is None else member_sums + per_member
        positions += int(keep.sum())
        stream_error = max(stream_error, readout.stream_error)
        logit_error = max(logit_error, readout.logit_error)
    if positions == 0:
        raise ValueError("the batches hold no position with a target")
    if max(identity, stream_error, logit_error) > TOLERANCE:
        raise ArithmeticError(
            f"an identity of the decomposition fails: MSE − (B − D) {identity:.2e} (relative), telescoping "
            f"{stream_error:.2e}, Σ contributions − logits {logit_error:.2e} (tolerance {TOLERANCE:g})"
        )
    summary = {name: value / positions for name, value in sums.items()}
    summary.update(
        share=summary["diversity"] / summary["bias"],
        positions=positions,
        identity_error=identity,
        stream_error=stream_error,
        logit_error=logit_error,
    )
    members = pd.DataFrame(
        {
            "member": range(member_sums.shape[1]),
            "bias": member_sums[0] / positions,
            "diversity": member_sums[1] / positions,
        }
    )
    return summary, members


__all__ = ["TOLERANCE", "decomposition"]
