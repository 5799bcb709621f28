# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Figure 1: the residual stream as an ensemble (overview)
#
# The paper's first figure is inferred (catalog §3, Fig. 1): a schematic of the residual stream as
# an ensemble whose members are the layers' outputs, with bias (each member's distance to the
# truth) and diversity (the members' spread around their mean). Left: that schematic. Right: the
# catalog's toy inset. Members are o_i = y + δ + ε_i around a one-hot target y ∈ R^K, with an error δ
# shared by every member and independent errors ε_i ~ N(0, σ²I). Their MSE falls as members are
# added: MSE = Bias − Diversity, and the diversity grows. Identical members (the same draw repeated)
# have no diversity, so their MSE stays where one member's is. The dashed line is the expectation
# ‖δ‖² + Kσ²/M.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "fig01", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/fig01_toy.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.pipeline.plotting import save_figure, use_style

use_style()
toy = pd.read_csv(inputs[0])
colors = {"independent": "#0072B2", "identical": "#D55E00"}

# %%
fig, (ax, ax_mse, ax_terms) = plt.subplots(1, 3, figsize=(14, 4.4), gridspec_kw={"width_ratios": [1.15, 1, 1]})
# schematic: members scattered around their mean, the target elsewhere
rng = np.random.default_rng(3)
members = np.array([0.2, 0.9]) + rng.normal(scale=0.45, size=(6, 2))
mean = members.mean(axis=0)
target = np.array([1.35, 1.7])
for point in members:
    ax.annotate("", xy=target, xytext=point, arrowprops={"arrowstyle": "-", "color": "#D55E00", "lw": 0.8, "ls": ":"})
    ax.annotate("", xy=point, xytext=mean, arrowprops={"arrowstyle": "-", "color": "#009E73", "lw": 1.0})
names = ["u₀ (embed)", "a₁", "m₁", "a₂", "m₂", "…"]
ax.scatter(members[:, 0], members[:, 1], s=45, color="#555555", zorder=3)
for point, name in zip(members, names):
    ax.text(point[0] + 0.05, point[1] - 0.12, name, fontsize=8)
ax.scatter(*mean, marker="X", s=110, color="#0072B2", zorder=4)
ax.text(mean[0] + 0.06, mean[1] + 0.06, "ō (the stream)", color="#0072B2", fontsize=9)
ax.scatter(*target, marker="*", s=220, color="#D55E00", zorder=4)
ax.text(target[0] + 0.07, target[1], "y (truth)", color="#D55E00", fontsize=9)
ax.annotate("", xy=target, xytext=mean, arrowprops={"arrowstyle": "<->", "color": "#0072B2", "lw": 1.6})
ax.text(
    0.02,
    0.02,
    "MSE ‖ō − y‖²  =  Bias (1/M)Σ‖o_i − y‖² (dotted)\n                     −  Diversity (1/M)Σ‖o_i − ō‖² (solid)",
    transform=ax.transAxes,
    fontsize=8,
    va="bottom",
)
ax.set_xticks([])
ax.set_yticks([])
ax.set_title("Layers as ensemble members (schematic)", fontsize=10)

for kind, rows in toy.groupby("ensemble"):
    rows = rows.sort_values("n_members")
    ax_mse.plot(rows["n_members"], rows["mse"], color=colors[kind], marker="o", markersize=3, label=f"{kind} members")
    ax_mse.plot(rows["n_members"], rows["expected_mse"], color=colors[kind], linestyle="--", linewidth=1)
    ax_terms.plot(rows["n_members"], rows["bias"], color=colors[kind], label=f"Bias, {kind}")
    ax_terms.plot(rows["n_members"], rows["diversity"], color=colors[kind], linestyle=":", label=f"Diversity, {kind}")
ax_mse.set_xscale("log", base=2)
ax_mse.set_xlabel("members M")
ax_mse.set_ylabel("ensemble MSE (mean over examples)")
ax_mse.set_title("Toy inset: MSE against members", fontsize=10)
ax_mse.legend(fontsize=8)
ax_terms.set_xscale("log", base=2)
ax_terms.set_xlabel("members M")
ax_terms.set_ylabel("Bias and Diversity")
ax_terms.set_title("MSE = Bias − Diversity", fontsize=10)
ax_terms.legend(fontsize=7)
note = (
    "Reconstructed from the paper's description: Fig. 1 is an inferred overview (catalog §3); "
    "the inset is the catalog's toy."
)
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# The toy's numbers at a few ensemble sizes:

# %%
toy[toy["n_members"].isin([1, 2, 4, 8, 16, 32, 64])].pivot_table(
    index="n_members", columns="ensemble", values=["mse", "bias", "diversity"]
).round(4)
