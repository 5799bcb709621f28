# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Across the papers — Figure 4: Allocation of Parameters' lens on Sixteen Heads
#
# Every head of sixteen_heads' NLI classifiers (every seed), on the test inputs: its softmax saturation, the
# mean over real query positions of the largest weight its attention puts on one key (1: one token;
# 1/T: uniform), against its Sixteen Heads importance (normalised per layer, as the pruning ranks heads).
# Left: each head, one colour per seed, the lowest- and highest-importance quarters shaded. Right: the
# saturation of the two quarters per seed. The question and its prediction were fixed before these numbers
# existed (docs/decisions/0051-cross-paper-claims.md).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "cross_paper", "fig04", "smoke"  # set by the runner
inputs = ["results/cross_paper/data/head_saturation.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.pipeline.plotting import palette, save_figure, use_style

use_style()
heads = pd.read_csv(inputs[0])
seeds = sorted(heads["seed"].unique())
colors = palette([f"seed {s}" for s in seeds])

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
quarters = []
for seed in seeds:
    rows = heads[heads["seed"] == seed].sort_values(["importance", "layer", "head"], kind="stable")
    k = max(1, len(rows) // 4)
    color = colors[f"seed {seed}"]
    left.scatter(rows["importance"], rows["saturation"], color=color, s=18, alpha=0.8, label=f"seed {seed}")
    low, high = rows.iloc[:k], rows.iloc[-k:]
    quarters.append(dict(seed=seed, low=low["saturation"].mean(), high=high["saturation"].mean()))
left.set_xlabel("Sixteen Heads importance (normalised per layer)")
left.set_ylabel("softmax saturation (mean largest attention weight)")
left.set_title("every head of the NLI classifiers")
left.legend()
table = pd.DataFrame(quarters)
for row in table.itertuples():
    right.plot([0, 1], [row.low, row.high], color=colors[f"seed {row.seed}"], marker="o")
right.set_xticks([0, 1], ["least important\nquarter", "most important\nquarter"])
right.set_xlim(-0.4, 1.4)
right.set_ylabel("mean saturation of the quarter")
right.set_title("the heads that can go, against those that matter")
save_figure(
    fig,
    results_dir,
    paper,
    item,
    scale,
    note="No paper has this figure: a question across them, asked of these models.",
)

# %%
table.assign(gap=table["low"] - table["high"]).round(4)
