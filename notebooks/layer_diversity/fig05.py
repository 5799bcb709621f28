# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 5: bias, diversity and accuracy along the layers
#
# The paper's Figs. 5–7 track bias, diversity and performance; the reviewers describe diversity as
# flat, then rising sharply in later layers, its rise lagging the fall of bias where accuracy
# improves, and some tasks (probably ARC) without any gain (catalog §3, Fig. 5; x-axis unknown).
#
# Here, for the deepest model of each family: the logit-lens prefix ensembles S_ℓ = {o₀..o_ℓ},
# ℓ = 0..L, one column per quantity and one row per task. Accuracy: the prefix ensemble's mean
# readout (solid) and layer ℓ's own readout (dashed). Lines are the mean over seeds, bands the
# seeds' range. One-hot target.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig05", "smoke"  # set by the runner
inputs = [
    "results/layer_diversity/data/fig05_prefixes.csv",
    "results/layer_diversity/data/fig05_examples.csv",
    "results/layer_diversity/data/table01_tasks.csv",
]

# %%
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from repro.papers.layer_diversity.depth_scaling import task_levels
from repro.pipeline.plotting import accuracy_axis, palette, save_figure, use_style

use_style()
prefixes = pd.read_csv(inputs[0])
examples = pd.read_csv(inputs[1])
chance, ceiling = task_levels(pd.read_csv(inputs[2]))  # a constant guess of a balanced task; the Bayes accuracy
prefixes = prefixes[prefixes["target"] == "onehot"]
families = list(dict.fromkeys(prefixes["family"]))
colors = palette(families)
tasks = ["sent", "entail", "topic", "mc"]
deepest = prefixes["depth"].max()
deep = prefixes[prefixes["depth"] == deepest]
columns = [("accuracy", "accuracy"), ("bias", "Bias"), ("diversity", "Diversity"), ("mse", "MSE")]

# %%
fig, axes = plt.subplots(len(tasks), len(columns), figsize=(13, 2.4 * len(tasks)), sharex=True, squeeze=False)
for r, task in enumerate(tasks):
    for c, (column, title) in enumerate(columns):
        ax = axes[r, c]
        for family in families:
            part = deep[(deep["family"] == family) & (deep["task"] == task)]
            stats = part.groupby("prefix")[column].agg(["mean", "min", "max"])
            ax.plot(stats.index, stats["mean"], color=colors[family], label=family, marker="o", markersize=3)
            ax.fill_between(stats.index, stats["min"], stats["max"], color=colors[family], alpha=0.15, linewidth=0)
            if column == "accuracy":
                layer = part.groupby("prefix")["layer_accuracy"].mean()
                ax.plot(layer.index, layer.values, color=colors[family], linestyle="--", linewidth=1)
        if column == "accuracy":
            accuracy_axis(ax, chance[task], ceiling[task])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if r == 0:
            ax.set_title(title + (" (— ensemble, -- layer ℓ)" if column == "accuracy" else ""), fontsize=9)
        if c == 0:
            ax.set_ylabel(task)
        if r == len(tasks) - 1:
            ax.set_xlabel("prefix ℓ (members o₀..o_ℓ)")
axes[0, 0].legend(fontsize=7)
fig.suptitle(f"Logit-lens prefix ensembles of the L = {deepest} models")
note = "Reconstructed from the paper's description: Fig. 5's axes are inferred (catalog §3)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Per-example Spearman ρ between Bias_i and Diversity_i, pooled over prefixes ℓ ≥ 1, mean over
# models and seeds ("diversity matters when outputs are far from the truth"), plain and with the
# shared Ω_i held fixed (the judged one: Ω alone makes the plain ρ positive):

# %%
examples.groupby(["task", "family"])[["spearman_bias_diversity", "partial_spearman_given_omega"]].mean().unstack(
    "family"
).round(3)
