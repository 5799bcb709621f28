# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 9 (reconstructed): recovery of every head at a fixed student dimension
#
# The content of the paper's appendix Figs. 7-9 is unknown; the catalog proposes, among others, the
# Fig. 4 protocol for all heads of the first and last layer as a heatmap of the recovery at r = 8.
# Each cell: one head of one seed's decoder replaced by a truncated-SVD student,
# R = (L_abl − L_student)/(L_abl − L_teacher), zero-shot (left) and after fine-tuning the student
# alone (right). The column "mean" is R from seed-mean losses.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig09", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/replacement.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.patches import Rectangle

from repro.papers.param_allocation.recovery import GAP_STANDARD_ERRORS, recovery_of_means, with_recovery
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
summary = pd.read_csv(inputs[0])
rows = with_recovery(summary)
rows = rows[rows["init"] == "svd"]
per_head = rows.groupby("rank")[["layer", "head"]].apply(lambda g: len(g.drop_duplicates()))
rank = int(per_head.idxmax())  # the rank every head was replaced at (the heatmap rank)
rows = rows[rows["rank"] == rank]
head_dim = int(summary["head_dim"].iloc[0])


def matrix(stage: str) -> pd.DataFrame:
    part = rows[rows["stage"] == stage]
    grid = part.pivot_table(index=["layer", "head"], columns="seed", values="recovery")
    grid.columns = [f"seed {s}" for s in grid.columns]
    grid["mean"] = recovery_of_means(part, ["layer", "head"])
    grid.index = [f"layer {layer}, head {head}" for layer, head in grid.index]
    return grid


# A cell is greyed out where its ablation gap is below GAP_STANDARD_ERRORS standard errors (paired over the
# held-out chunks; for the mean column, of the seeds' mean gap): there R is a ratio of noise.
ablated = summary[summary["condition"] == "ablated"].copy()
ablated["gap"] = ablated["eval_loss"] - ablated["seed"].map(
    summary[summary["condition"] == "teacher"].set_index("seed")["eval_loss"]
)
per_seed = ablated.pivot_table(index=["layer", "head"], columns="seed", values=["gap", "ablation_gap_se"])
resolved = per_seed["gap"] >= GAP_STANDARD_ERRORS * per_seed["ablation_gap_se"]
resolved.columns = [f"seed {s}" for s in resolved.columns]
n_seeds = per_seed["gap"].shape[1]
resolved["mean"] = (
    per_seed["gap"].mean(axis=1)
    >= GAP_STANDARD_ERRORS * (per_seed["ablation_gap_se"] ** 2).sum(axis=1) ** 0.5 / n_seeds
)
resolved.index = [f"layer {layer}, head {head}" for layer, head in resolved.index]


# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 0.55 * rows[["layer", "head"]].drop_duplicates().shape[0] + 2.4))
for ax, stage, title in [(axes[0], "zero_shot", "zero-shot"), (axes[1], "finetuned", "after fine-tuning")]:
    grid = matrix(stage)
    sns.heatmap(
        grid,
        ax=ax,
        annot=True,
        fmt=".2f",
        cmap="viridis",
        vmin=0.0,
        vmax=1.0,
        cbar=stage == "finetuned",
        cbar_kws={"label": "recovery R"},
        annot_kws={"fontsize": 8},
    )
    for row, label in enumerate(grid.index):
        for column, name in enumerate(grid.columns):
            if not resolved.loc[label, name]:  # over the colours, under the annotations (zorder 3)
                ax.add_patch(Rectangle((column, row), 1, 1, facecolor="lightgrey", alpha=0.9, zorder=2))
    ax.set_title(f"SVD students of dimension r = {rank} (d_h = {head_dim}), {title}")
fig.suptitle(
    "Recovery of every head of the replaced layers (R = 1: teacher's loss; 0: head ablated); grey: ablation gap "
    f"below {GAP_STANDARD_ERRORS:g} standard errors"
)
note = "Reconstructed from the paper's description: the appendix figure's content is unknown (catalog §2, Figs 7-9)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# The ablation gap L_abl − L_teacher of each head (nats) says how much a head matters; recovery is
# noisy where that gap is small.

# %%
gaps = rows[rows["stage"] == "finetuned"].assign(ablation_gap=lambda t: t["ablated_loss"] - t["teacher_loss"])
print(
    to_markdown(
        gaps[["seed", "layer", "head", "ablation_gap", "eval_loss", "recovery", "distill_error"]].sort_values(
            ["layer", "head", "seed"]
        )
    )
)
