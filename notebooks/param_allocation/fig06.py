# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 6 (reconstructed): where in the sequence a replaced head costs loss
#
# Yu et al. (2025), Fig. 6 is a second single-head compression experiment; its model, layer and axes
# are not known. The catalog proposes a per-position analysis: under causal masking the query at
# position t attends to t + 1 keys, so its effective sequence length is t, and saturation (Theorem 2)
# predicts that a lower-dimensional head costs less at late positions.
#
# Here: the zero-shot replacements of Fig. 4 (its head of the first and last layer, truncated-SVD
# students of dimension r, no fine-tuning). Top: Δloss(t) = L_student(t) − L_teacher(t) per position,
# seed means. Bottom: the same averaged over position buckets, mean ± sd over seeds; the ablated head
# is drawn for reference.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig06", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/replacement_positions.csv"]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.papers.param_allocation.recovery import at_sweep_heads, bucket_means, position_deltas, sweep_head_label
from repro.pipeline.plotting import palette, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
deltas = position_deltas(pd.read_csv(inputs[0]))
deltas = at_sweep_heads(deltas, deltas)
zero_shot = deltas[(deltas["stage"] == "zero_shot") & (deltas["init"].isin(["svd", "none"]))]
layers = sorted(zero_shot["layer"].unique())
ranks = sorted(zero_shot.loc[zero_shot["condition"] == "student", "rank"].unique())
labels = [f"r = {r}" for r in ranks] + ["ablated"]
colours = palette(labels)
seeds = zero_shot["seed"].nunique()


def label_of(row_rank, condition):
    return "ablated" if condition == "ablated" else f"r = {row_rank}"


# %%
fig, axes = plt.subplots(2, len(layers), figsize=(6.2 * len(layers), 8.0), squeeze=False)
for column, layer in enumerate(layers):
    part = zero_shot[zero_shot["layer"] == layer]
    ax = axes[0, column]
    for (rank, condition), cell in part.groupby(["rank", "condition"]):
        curve = cell.groupby("position")["delta"].mean()
        name = label_of(rank, condition)
        ax.plot(
            curve.index + 1,
            curve.values,
            color=colours[name],
            lw=1.2,
            linestyle=":" if condition == "ablated" else "-",
            label=name,
        )
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("keys seen by the query (position t + 1)")
    ax.set_ylabel("Δloss vs teacher (nats)")
    ax.set_title(f"layer {layer}, {sweep_head_label(part)}: zero-shot SVD students")
    ax = axes[1, column]
    buckets = bucket_means(part)
    per_seed = (
        buckets.groupby(["rank", "condition", "bucket_start", "bucket_end"])["delta"].agg(["mean", "std"]).reset_index()
    )
    edges = sorted(per_seed["bucket_start"].unique())
    width = 0.8 / max(1, per_seed.groupby(["rank", "condition"]).ngroups)
    for k, ((rank, condition), cell) in enumerate(per_seed.groupby(["rank", "condition"])):
        x = np.arange(len(edges)) + (k - 0.5 * (per_seed.groupby(["rank", "condition"]).ngroups - 1)) * width
        name = label_of(rank, condition)
        ax.bar(x, cell["mean"], width, yerr=cell["std"].fillna(0), color=colours[name], label=name, capsize=2)
    ends = per_seed.drop_duplicates("bucket_start").sort_values("bucket_start")["bucket_end"]
    ax.set_xticks(np.arange(len(edges)))
    ax.set_xticklabels([f"[{a}, {b})" for a, b in zip(edges, ends)])
    ax.set_xlabel("position bucket")
    ax.set_ylabel("mean Δloss (nats)")
    ax.axhline(0, color="black", lw=0.8)
axes[0, 0].legend(fontsize=7, ncol=2)
axes[1, 0].legend(fontsize=7, ncol=2)
fig.suptitle(f"Per-position loss change of a zero-shot replaced head (seed means over {seeds} seeds)")
note = "Reconstructed from the paper's description: the catalog's per-position analysis of the Fig 4 replacements (catalog §2, Fig 6)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Bucket means per seed (the check compares the first and the last bucket for r ≤ 8):

# %%
print(to_markdown(bucket_means(zero_shot).sort_values(["layer", "condition", "rank", "seed", "bucket_start"])))
