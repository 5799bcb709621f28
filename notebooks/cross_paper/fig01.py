# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Across the papers — Figure 1: Sixteen Heads' lens on Simplifying Transformer Blocks
#
# Each of simplified_blocks' Fig 26 decoders (Pre-LN, Parallel, SAS, SAS-P; every seed) is evaluated on the
# held-out chunks it was scored on. Left: the prune-by-importance curve, the loss increase when the least
# important 25, 50 and 75 % of the 16 heads are masked (importance ranked once, on the whole model,
# normalised per layer as in Sixteen Heads). Right: how concentrated the importance is, the share of the
# total held by the top k heads. Thin lines are seeds, thick lines their mean. The question and its
# prediction were fixed before these numbers existed (docs/decisions/0051-cross-paper-claims.md).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "cross_paper", "fig01", "smoke"  # set by the runner
inputs = [
    "results/cross_paper/data/block_heads.csv",
    "results/cross_paper/data/block_prune.csv",
    "results/cross_paper/data/block_members.csv",
    "results/cross_paper/data/block_decomposition.csv",
    "results/cross_paper/data/block_reference_levels.json",
]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.pipeline.plotting import label, line_style, save_figure, use_style

use_style()
heads = pd.read_csv(inputs[0])
prune = pd.read_csv(inputs[1])
blocks = [b for b in ("pre_ln", "parallel", "sas", "sas_p") if b in set(prune["variant"])]
blocks += [b for b in dict.fromkeys(prune["variant"]) if b not in blocks]

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for block in blocks:
    style = line_style(block)
    runs = prune[prune["variant"] == block]
    for _, run in runs.groupby("seed"):
        left.plot(run["percent"], run["delta_loss"], color=style["color"], alpha=0.35, linewidth=0.8)
    mean = runs.groupby("percent")["delta_loss"].mean()
    left.plot(mean.index, mean.values, label=label(block), linewidth=2, **style)

    shares = []
    for _, run in heads[heads["variant"] == block].groupby("seed"):
        values = np.sort(run["importance"].to_numpy())[::-1]
        cumulative = np.cumsum(values) / values.sum()
        shares.append(cumulative)
        right.plot(np.arange(1, len(values) + 1), cumulative, color=style["color"], alpha=0.35, linewidth=0.8)
    right.plot(np.arange(1, len(shares[0]) + 1), np.mean(shares, axis=0), label=label(block), linewidth=2, **style)
left.axhline(0, color="#888888", linewidth=0.6)
left.set_xlabel("share of heads masked, lowest importance first (%)")
left.set_ylabel("held-out loss increase ΔL (nats/token)")
left.set_title("prune by importance")
left.legend()
n_heads = heads.groupby(["variant", "seed"]).size().max()
right.plot([0, n_heads], [0, 1], color="#888888", linewidth=0.6, linestyle=":", label="equal importance")
right.axvline(n_heads / 4, color="#888888", linewidth=0.6, linestyle="--")
right.set_xlabel("top k heads by importance")
right.set_ylabel("share of the total importance (layer-normalised)")
right.set_title("how concentrated the importance is")
right.legend()
save_figure(
    fig,
    results_dir,
    paper,
    item,
    scale,
    note="No paper has this figure: a question across them, asked of these models.",
)

# %%
at_half = prune[prune["percent"] == 50].pivot(index="seed", columns="variant", values="delta_loss")
at_half.round(4)
