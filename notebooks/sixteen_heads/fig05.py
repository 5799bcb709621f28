# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 5: pruning during training (IWSLT)
#
# Michel et al. (2019), §6, Fig. 5: at the end of several epochs of IWSLT training, importance is
# recomputed on that checkpoint and 0-90% of heads are pruned. Left: the pruned model's BLEU as a
# percentage of the unpruned BLEU at that epoch (one line per pruning level, epochs on a log axis,
# unpruned BLEU in brackets). Right: the same against the share pruned, one line per epoch. Early
# (epochs 1-2) the loss is roughly linear in the share pruned; from epoch 10 on, 40% of heads can go
# keeping 85-90% of BLEU.
#
# Here: the S2S model on the IWSLT analogue (an epoch is train size / batch size updates), snapshots
# at the configured epochs, importance on training data and ⌈N·p/100⌉ heads pruned, test-set BLEU.
# Lines are means over seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig05", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/epochs.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
epochs = pd.read_csv(inputs[0])
# Relative score per level and epoch, mean over seeds; a zero unpruned BLEU gives NaN (not plotted).
mean = epochs.groupby(["epoch", "percent"])["relative"].mean().unstack("percent")  # [epoch, percent]
base = epochs.groupby("epoch")["baseline"].mean()

# %%
n_seeds = epochs["seed"].nunique()
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
cmap = plt.get_cmap("viridis")
levels = list(mean.columns)
for i, percent in enumerate(levels):
    left.plot(
        mean.index,
        100 * mean[percent],
        marker="o",
        markersize=3,
        color=cmap(i / max(1, len(levels) - 1)),
        label=f"{percent}%",
    )
left.set_xscale("log")
left.set_xticks(list(mean.index))
left.set_xticklabels([f"{e}\n[{base[e]:.1f}]" for e in mean.index], fontsize=7)
left.set_xlabel("epoch [unpruned BLEU]")
left.set_ylabel("BLEU, % of unpruned")
left.legend(fontsize=7, title="pruned", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # off the lines
left.set_title(f"BLEU of the pruned model at each epoch (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})")
shown = sorted({int(mean.index[0]), int(mean.index[min(1, len(mean) - 1)]), *[int(e) for e in mean.index[-2:]]})
for j, epoch in enumerate(shown):
    right.plot(
        levels,
        100 * mean.loc[epoch],
        marker="o",
        markersize=3,
        color=cmap(j / max(1, len(shown) - 1)),
        label=f"epoch {epoch}",
    )
right.set_xlabel("heads pruned (%)")
right.set_ylabel("BLEU, % of unpruned")
right.legend(fontsize=7)
right.set_title("The same against the share of heads pruned")
for ax in (left, right):
    ax.set_ylim(bottom=0)
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Mean relative score (fraction of unpruned BLEU) per epoch and pruning level, mean over seeds.

# %%
table = mean.copy()
table.insert(0, "unpruned BLEU", base)
print(to_markdown(table.round(3).reset_index()))
