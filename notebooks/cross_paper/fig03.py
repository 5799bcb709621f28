# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Across the papers — Figure 3: Sixteen Heads' lens on Allocation of Parameters' head-count sweeps
#
# Each model of param_allocation's sweeps has one attention layer of H heads at a fixed width D = H·d_h
# (every task, both position kinds, every seed). On the sweep's own held-out sequences its heads are ranked
# by Sixteen Heads importance and masked, least important first. Top: the held-out loss as heads are
# masked, as a share of the way from the trained model's loss to the best constant predictor's (dashed:
# the 5 % allowed), one line per H (mean over seeds). Bottom right: the removable share, the most heads that
# can go within that 5 %, against H. The question and its prediction were fixed before these numbers
# existed (docs/decisions/0051-cross-paper-claims.md).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "cross_paper", "fig03", "smoke"  # set by the runner
inputs = ["results/cross_paper/data/sweep_pruning.csv", "results/cross_paper/data/sweep_pruning_curves.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.pipeline.plotting import palette, save_figure, use_style

use_style()
table = pd.read_csv(inputs[0])
curves = pd.read_csv(inputs[1])
keys = ["task", "position", "heads", "seed"]
curves = curves.merge(table[[*keys, "loss", "constant_loss"]], on=keys, suffixes=("", "_whole"))
span = (curves["constant_loss"] - curves["loss_whole"]).clip(lower=1e-12)
curves["way_to_constant"] = (curves["loss"] - curves["loss_whole"]) / span
sweeps = list(table[["task", "position"]].drop_duplicates().itertuples(index=False, name=None))
head_counts = sorted(table["heads"].unique())
colors = palette([f"H = {h}" for h in head_counts])

# %%
fig, axes = plt.subplots(2, len(sweeps) // 2 + 1, figsize=(3.4 * (len(sweeps) // 2 + 1), 6.4), squeeze=False)
for index, (task, position) in enumerate(sweeps):
    ax = axes.flat[index]
    rows = curves[(curves["task"] == task) & (curves["position"] == position)]
    for heads in head_counts:
        mean = rows[rows["heads"] == heads].groupby("share")["way_to_constant"].mean()
        ax.plot(100 * mean.index, mean.values, color=colors[f"H = {heads}"], linewidth=1.2, label=f"H = {heads}")
    ax.axhline(0.05, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_ylim(-0.05, 1.1)
    ax.set_title(f"{task}, {position}", fontsize=9)
    ax.set_xlabel("heads masked (%)", fontsize=8)
    if index % axes.shape[1] == 0:
        ax.set_ylabel("share of the way to the constant predictor", fontsize=8)
axes.flat[0].legend(fontsize=6, ncol=2)
summary = axes.flat[-1]
for axis in axes.flat[len(sweeps) : -1]:
    axis.set_visible(False)
for task, position in sweeps:
    rows = table[(table["task"] == task) & (table["position"] == position)]
    mean = rows.groupby("heads")["removable_share"].mean()
    summary.plot(np.log2(mean.index), mean.values, marker="o", linewidth=1, label=f"{task}/{position}")
summary.set_xticks(np.log2(head_counts), [str(h) for h in head_counts])
summary.set_xlabel("heads H (log scale), fixed width")
summary.set_ylabel("removable share (mean over seeds)")
summary.set_title("the share of heads that can go", fontsize=9)
summary.legend(fontsize=6)
save_figure(
    fig,
    results_dir,
    paper,
    item,
    scale,
    note="No paper has this figure: a question across them, asked of these models.",
)

# %%
table.pivot_table(index=["task", "position"], columns="heads", values="removable_share").round(3)
