# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 7: the information-theoretic terms, and adding a layer
#
# Fig. 7 exists (confirmed), but its content is unknown. The catalog infers that it shows the
# information-theoretic decomposition (Eq. 13) against the number of layers:
#
# I(U;Y) = Relevancy − Redundancy + Conditional redundancy, with IT diversity = Cond. red. − Red.
#
# Theorems 5 and 6 say that both redundancy terms only grow as layers are added, so a layer helps
# only if it brings information the others lack.
#
# Top row: the terms over the logit-lens prefixes of the deepest models (U_ℓ = layer ℓ's argmax
# label, plug-in estimates on each task's test split), mean over families and seeds. Bottom left:
# the information gained by appending a copy of the last layer's prediction (exactly 0) and by
# appending an independent noisy copy of the label. Bottom right: the catalog's optional
# intervention. For a model of depth L, compare (i) the same model with its last block copied and
# inserted untrained and (ii) the trained model of depth L+1. Bars show the change in accuracy from
# the depth-L model, mean over seeds and tasks.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig07", "smoke"  # set by the runner
inputs = [
    "results/layer_diversity/data/fig07_information.csv",
    "results/layer_diversity/data/fig07_gains.csv",
    "results/layer_diversity/data/fig07_duplication.csv",
]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from repro.pipeline.plotting import palette, save_figure, use_style

use_style()
info = pd.read_csv(inputs[0])
gains = pd.read_csv(inputs[1])
duplication = pd.read_csv(inputs[2])
tasks = ["sent", "entail", "topic", "mc"]
terms = [
    ("joint_information", "I(U;Y)"),
    ("relevancy", "Relevancy"),
    ("redundancy", "Redundancy"),
    ("conditional_redundancy", "Cond. redundancy"),
    ("it_diversity", "IT diversity"),
]
term_colors = palette([name for _, name in terms])
deepest = info["depth"].max()
deep = info[info["depth"] == deepest]

# %%
fig = plt.figure(figsize=(15, 8))
grid = fig.add_gridspec(2, 4)
for c, task in enumerate(tasks):
    ax = fig.add_subplot(grid[0, c])
    part = deep[deep["task"] == task].groupby("prefix")[[column for column, _ in terms]].mean()
    for column, name in terms:
        ax.plot(
            part.index,
            part[column],
            marker="o",
            markersize=3,
            color=term_colors[name],
            label=name,
            linestyle="--" if column == "it_diversity" else "-",
        )
    ax.axhline(0, color="#999999", linewidth=0.6)
    ax.set_title(f"{task}: L = {deepest} models", fontsize=9)
    ax.set_xlabel("prefix ℓ (members U₀..U_ℓ)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if c == 0:
        ax.set_ylabel("bits")
        ax.legend(fontsize=7)

ax = fig.add_subplot(grid[1, 0:2])
summary = gains.groupby("task")[["duplicate_gain", "independent_gain"]].agg(["mean", "min", "max"]).reindex(tasks)
x = np.arange(len(tasks))
for offset, column, name, color in (
    (-0.18, "duplicate_gain", "copy of the last layer", "#D55E00"),
    (0.18, "independent_gain", "independent noisy copy of Y (p = 0.3)", "#0072B2"),
):
    mean = summary[(column, "mean")]
    err = np.vstack([mean - summary[(column, "min")], summary[(column, "max")] - mean])
    ax.bar(x + offset, mean, width=0.34, color=color, label=name, yerr=err, capsize=3)
    if column == "duplicate_gain":  # exactly zero: a bar of height 0 would be invisible
        for xi, value in zip(x + offset, summary[(column, "max")].abs()):
            ax.text(xi, 0, f"{value:.0g}" if value > 0 else "0", ha="center", va="bottom", fontsize=7, color=color)
ax.set_xticks(x, tasks)
ax.set_ylabel("ΔI = I(U, U_new; Y) − I(U; Y)  [bits]")
ax.set_title("Information gained by appending a member to all layers (bars: mean, whiskers: range)", fontsize=9)
ax.legend(fontsize=7)

ax = fig.add_subplot(grid[1, 2:4])
if len(duplication):
    wide = duplication.pivot_table(
        index=["family", "base_depth", "task", "seed"], columns="variant", values="accuracy"
    ).dropna()
    delta = pd.DataFrame(
        {"duplicated block": wide["duplicated"] - wide["original"], "trained L+1": wide["trained"] - wide["original"]}
    )
    means = delta.groupby(level=["family", "base_depth"]).mean()
    labels = [f"{f}\nL={d}→{d + 1}" for f, d in means.index]
    x = np.arange(len(means))
    ax.bar(x - 0.18, means["duplicated block"], width=0.34, color="#D55E00", label="duplicated block (untrained)")
    ax.bar(x + 0.18, means["trained L+1"], width=0.34, color="#009E73", label="trained model of depth L+1")
    ax.set_xticks(x, labels, fontsize=7)
    ax.axhline(0, color="#999999", linewidth=0.6)
    ax.legend(fontsize=7)
else:
    ax.text(0.5, 0.5, "no duplicated models at this scale", ha="center", transform=ax.transAxes)
ax.set_ylabel("Δ accuracy from the depth-L model")
ax.set_title("Adding a layer: a copy of the last block vs a trained extra layer (mean over tasks, seeds)", fontsize=9)
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
note = (
    "Reconstructed from the paper's description: Fig. 7's content is unknown; the catalog infers "
    "the information terms (catalog §3)."
)
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Intervention, per family and base depth: accuracy and logit-lens diversity of the three models (mean
# over tasks and seeds):

# %%
if len(duplication):
    display_table = duplication.groupby(["family", "base_depth", "variant"])[
        ["accuracy", "diversity", "module_diversity_per_m2"]
    ].mean()
else:
    display_table = duplication
display_table.round(4)
