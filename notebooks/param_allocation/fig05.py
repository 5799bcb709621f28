# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 5: head dimension against sequence length in multi-layer decoders
#
# Yu et al. (2025), Fig. 5 trains 6-layer decoders on 1% of WikiText-103 (about 1M tokens) to show that
# saturation persists beyond the single-layer theory: with longer sequences, a larger head dimension
# buys less. The paper reports train and validation losses only; what exactly Fig. 5 plots is inferred.
#
# Here: 4-layer decoders (width and heads fixed; W^P maps the H·d_h context back to the width) on the
# offline code corpus, for every head dimension d_h and sequence length L, all runs seeing the same
# number of tokens. Left: final validation loss against d_h per L. Middle: the gain of the largest
# over the smallest head dimension against L (the check: non-increasing). Right: validation curves.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig05", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/decoders.csv", "results/param_allocation/data/decoder_curves.csv"]
levels = "results/param_allocation/data/lm_reference_levels.json"  # reference levels of the held-out split

# %%
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from repro.papers.param_allocation.plots import plot_mean_sd
from repro.pipeline.plotting import draw_reference_levels, palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
runs = pd.read_csv(inputs[0])
curves = pd.read_csv(inputs[1])
lengths = sorted(runs["length"].unique())
head_dims = sorted(runs["head_dim"].unique())
colours = palette([f"L = {L}" for L in lengths])
seeds = runs["seed"].nunique()
small, large = head_dims[0], head_dims[-1]

# %%
fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
ax = axes[0]
for L in lengths:
    plot_mean_sd(ax, runs[runs["length"] == L], "head_dim", "eval_loss", color=colours[f"L = {L}"], label=f"L = {L}")
ax.set_xscale("log", base=2)
ax.set_xticks(head_dims)
ax.set_xticklabels([str(d) for d in head_dims])
ax.set_xlabel("head dimension d_h")
ax.set_ylabel("final validation loss (nats)")
ax.set_title("Loss against head dimension")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)  # how far the decoders got from the unigram and bigram levels

ax = axes[1]
pivot = runs.pivot_table(index=["seed", "length"], columns="head_dim", values="eval_loss")
gain = (pivot[small] - pivot[large]).rename("gain").reset_index()
plot_mean_sd(ax, gain, "length", "gain", color="black", label="seed mean ± sd")
ax.scatter(gain["length"], gain["gain"], color="grey", alpha=0.5, s=14, label="single seeds")
ax.axhline(0, color="black", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xticks(lengths)
ax.set_xticklabels([str(L) for L in lengths])
ax.set_xlabel("sequence length L")
ax.set_ylabel(f"val(d_h={small}) − val(d_h={large}) (nats)")
ax.set_title("Gain of the larger head dimension")
ax.legend(fontsize=8)

ax = axes[2]
evals = curves[curves["split"] == "eval"]
styles = ["-", "--", ":", "-."]
for L in lengths:
    for k, d in enumerate(head_dims):
        cell = evals[(evals["length"] == L) & (evals["head_dim"] == d)].groupby("tokens")["loss"].mean()
        ax.plot(cell.index, cell.values, color=colours[f"L = {L}"], linestyle=styles[k % len(styles)], marker=".")
ax.set_xlabel("training tokens")
ax.set_ylabel("validation loss (nats)")
ax.set_title("Validation curves (seed means)")
draw_reference_levels(ax, levels)
# colour = L (as in the first panel), line style = d_h
handles = [Line2D([], [], color=colours[f"L = {L}"], lw=2, label=f"L = {L}") for L in lengths]
handles += [
    Line2D([], [], color="0.3", linestyle=styles[k % len(styles)], label=f"d_h = {d}") for k, d in enumerate(head_dims)
]
ax.legend(handles=handles, fontsize=7, ncol=2)
fig.suptitle(f"Decoders with reduced head dimensions across sequence lengths ({seeds} seeds)")
note = "Reconstructed from the paper's description: plotted quantity inferred; code corpus instead of WikiText-103 (catalog §2, Fig 5)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Final losses per run (seed means), with parameter counts:

# %%
print(
    to_markdown(
        runs.groupby(["length", "head_dim"])
        .agg(
            eval_loss=("eval_loss", "mean"),
            eval_loss_sd=("eval_loss", "std"),
            parameters=("parameters", "first"),
            attention_parameters=("attention_parameters", "first"),
            batch_size=("batch_size", "first"),
            tokens=("tokens", "first"),
            seeds=("seed", "nunique"),
        )
        .reset_index()
    )
)
