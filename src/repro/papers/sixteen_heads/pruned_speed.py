"""Inference speed of a model before and after removing heads physically (Michel et al. 2019, §4.3).

The pruned model is a copy of the trained model with the chosen heads sliced out of W^Q, W^K,
W^V (rows) and W^O (columns) by `repro.models.prune_heads`; W^O's bias stays. It must compute
what the masked model computes, which `compare_masked_and_pruned` measures on real inputs.
Speed is examples per second of one forward pass under ``torch.no_grad()`` in eval mode over a
fixed set of inputs cut into batches of a given size; the models are timed in interleaved rounds
(`repro.analysis.throughput.time_interleaved`) so that both see the same machine.
Works on any classifier `Transformer` of the family (with token types or without), on the
device of its parameters (inputs are moved there; on a GPU each timed pass ends with a synchronize,
so the clock stops when the kernels are done).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import pandas as pd
import torch

from repro.analysis import heads as H
from repro.analysis.device import model_device
from repro.analysis.throughput import time_interleaved
from repro.models import Transformer, count_parameters, prune_heads


def attention_weights(model: Transformer) -> int:
    """Entries of the Q, K, V and O weight matrices of every attention layer (biases excluded)."""
    total = 0
    for block in model.blocks:
        attn = block.attn
        for part in (attn.q_proj, attn.k_proj, attn.value, attn.proj):
            weight = getattr(part, "weight", None)
            if weight is not None:
                total += weight.numel()
    return total


def pruned_copy(model: Transformer, masks: Mapping[str, torch.Tensor]) -> Transformer:
    """A deep copy of ``model`` with the heads that ``masks`` remove sliced out (the original is untouched)."""
    pruned = copy.deepcopy(model)
    prune_heads(pruned, H.pruned_heads(masks)[H.SELF])
    return pruned.eval()


@torch.no_grad()
def compare_masked_and_pruned(
    model: Transformer,
    pruned: Transformer,
    masks: Mapping[str, torch.Tensor],
    input_ids: torch.Tensor,
    labels: torch.Tensor,
    pad_id: int = 0,
    batch_size: int = 500,
) -> dict[str, float]:
    """Accuracy (fraction) of the masked and of the pruned model on (input_ids [N,T], labels [N]),
    and the largest absolute difference of their logits."""
    model.eval()
    pruned.eval()
    device = model_device(model)
    mask = masks[H.SELF].to(device)
    correct = {"masked": 0, "pruned": 0}
    max_diff = 0.0
    for start in range(0, len(input_ids), batch_size):
        ids = input_ids[start : start + batch_size].to(device)
        padding = ids != pad_id
        masked_logits = model(ids, padding_mask=padding, head_mask=mask)
        pruned_logits = pruned(ids, padding_mask=padding)
        max_diff = max(max_diff, float((masked_logits - pruned_logits).abs().max()))
        gold = labels[start : start + batch_size].to(device)
        correct["masked"] += int((masked_logits.argmax(-1) == gold).sum())
        correct["pruned"] += int((pruned_logits.argmax(-1) == gold).sum())
    n = len(input_ids)
    return {
        "accuracy_masked": correct["masked"] / n,
        "accuracy_pruned": correct["pruned"] / n,
        "max_logit_difference": max_diff,
    }


def model_facts(models: Mapping[str, Transformer]) -> pd.DataFrame:
    """Per model: trainable parameters, Q/K/V/O weight entries and heads per layer."""
    return pd.DataFrame(
        [
            dict(
                variant=name,
                parameters=count_parameters(m),
                attention_weights=attention_weights(m),
                heads=int(sum(block.attn.n_heads for block in m.blocks)),
                heads_per_layer=" ".join(str(block.attn.n_heads) for block in m.blocks),
            )
            for name, m in models.items()
        ]
    )


def time_inference(
    models: Mapping[str, Transformer],
    input_ids: torch.Tensor,
    batch_sizes: Sequence[int],
    rounds: int,
    warmup: int = 1,
    pad_id: int = 0,
) -> pd.DataFrame:
    """Examples per second of each model over all of ``input_ids`` [N,T] in batches of each size.

    One row per (batch size, model, round): seconds for the N examples and examples/s. The models
    are timed interleaved within each batch size (see module docstring).
    """
    if len(input_ids) == 0:
        raise ValueError("time_inference needs at least one example")
    batches = {}
    for size in batch_sizes:
        if size < 1:
            raise ValueError(f"batch size {size} must be >= 1")
        batches[size] = [(ids, ids != pad_id) for ids in torch.split(input_ids, size)]
    frames = []
    for size, chunks in batches.items():
        steps = {name: _forward_all(model.eval(), chunks) for name, model in models.items()}
        timings = time_interleaved(steps, rounds=rounds, warmup=warmup)
        timings.insert(0, "batch_size", size)
        timings["examples"] = len(input_ids)
        timings["examples_per_s"] = len(input_ids) / timings["seconds"]
        frames.append(timings)
    return pd.concat(frames, ignore_index=True)


def _forward_all(model: Transformer, chunks):
    device = model_device(model)
    chunks = [(ids.to(device), padding.to(device)) for ids, padding in chunks]  # moved once, outside the clock
    cuda = device.type == "cuda"

    @torch.no_grad()
    def run():
        for ids, padding in chunks:
            model(ids, padding_mask=padding)
        if cuda:  # kernels run asynchronously: wait for them before the clock stops
            torch.cuda.synchronize()

    return run


def summarize_speed(timings: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (batch size, model): median, mean and sd of examples/s over rounds, and the speedup of
    the median over ``reference``'s median at the same batch size (1.0 = as fast)."""
    grouped = timings.groupby(["batch_size", "variant"], sort=False)["examples_per_s"]
    out = grouped.agg(median="median", mean="mean", sd="std", rounds="count").reset_index()
    ref = out[out["variant"] == reference].set_index("batch_size")["median"]
    if ref.empty:
        raise ValueError(f"reference model {reference!r} was not timed")
    out["speedup"] = out["median"] / out["batch_size"].map(ref)
    return out
