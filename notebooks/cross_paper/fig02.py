# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Across the papers — Figure 2: Diversity of Layers' lens on Simplifying Transformer Blocks
#
# The residual stream of any block telescopes, h_L = h_0 + Σ_l (h_l − h_{l−1}), so the layer increments of
# simplified_blocks' Fig 26 decoders are additive members even without skips. Each is read through the
# final norm frozen at the full stream and the unembedding (module form: the members' mean is the model's
# logits) and decomposed against the one-hot next token at every held-out position: the members' average
# error B and their diversity D. Left: the diversity share D / B per block and seed. Middle: each member's
# error along the stream (mean over seeds, log scale). Right: D / B against the held-out loss, one line per
# seed through its four blocks. Claims fixed in advance: docs/decisions/0051-cross-paper-claims.md.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "cross_paper", "fig02", "smoke"  # set by the runner
inputs = [
    "results/cross_paper/data/block_heads.csv",
    "results/cross_paper/data/block_prune.csv",
    "results/cross_paper/data/block_members.csv",
    "results/cross_paper/data/block_decomposition.csv",
    "results/cross_paper/data/block_reference_levels.json",
]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.pipeline.plotting import label, line_style, save_figure, use_style

use_style()
members = pd.read_csv(inputs[2])
summary = pd.read_csv(inputs[3])
blocks = [b for b in ("pre_ln", "parallel", "sas", "sas_p") if b in set(summary["variant"])]
blocks += [b for b in dict.fromkeys(summary["variant"]) if b not in blocks]

# %%
fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 4))
for x, block in enumerate(blocks):
    style = line_style(block)
    rows = summary[summary["variant"] == block]
    left.scatter([x] * len(rows), rows["share"], color=style["color"], marker=style["marker"], alpha=0.6)
    left.hlines(rows["share"].mean(), x - 0.3, x + 0.3, color=style["color"], linewidth=2)
    profile = members[members["variant"] == block].groupby("member")["bias"].mean()
    middle.plot(profile.index, profile.values, label=label(block), **style)
left.set_xticks(range(len(blocks)), [label(b) for b in blocks])
left.set_ylabel("diversity share D / B of the layer increments")
left.set_title("diversity of the layers, by block")
middle.set_yscale("log")
middle.set_xlabel("member (0: the stream's input h_0; l: layer l's increment)")
middle.set_ylabel("member error ‖o_i − y‖² (module form)")
middle.set_title("each member's error")
middle.legend()
for _, rows in summary[summary["variant"].isin(blocks)].groupby("seed"):
    rows = rows.sort_values("share")
    right.plot(rows["share"], rows["heldout_loss"], color="#999999", linewidth=0.8, zorder=1)
    for row in rows.itertuples():
        style = line_style(row.variant)
        right.scatter(row.share, row.heldout_loss, color=style["color"], marker=style["marker"], zorder=2)
right.set_xlabel("diversity share D / B")
right.set_ylabel("held-out loss (nats/token)")
right.set_title("diversity against loss (a line per seed)")
save_figure(
    fig,
    results_dir,
    paper,
    item,
    scale,
    note="No paper has this figure: a question across them, asked of these models.",
)

# %%
summary[["variant", "seed", "bias", "diversity", "share", "heldout_loss"]].round(4)
