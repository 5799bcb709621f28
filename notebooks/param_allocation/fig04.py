# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Figure 4: one head replaced by a reduced-dimension student
#
# Yu et al. (2025), Fig. 4: in a (pre)trained model a single attention head is replaced by a head of
# lower dimension (Corollary 2: a low-rank head closely approximates a high-dimensional one); the
# paper reports train/validation losses. Which model, layer and dimensions it uses is not known;
# this is the catalog's reconstruction.
#
# Here: small decoders trained on the offline code corpus (one per seed). In the first and the last
# layer, one head (the config's `replacement.head`; at laptop scale the head whose removal costs the
# most loss on training chunks, so that the head matters) is replaced by a student of dimension r,
# initialised by the truncated SVD of the
# head's two bilinear forms (W_QᵀW_K/√d_h and W^P W_V, with the catalog's scale correction) or at
# random, evaluated zero-shot and after fine-tuning the student alone (an MSE fit to the teacher
# head's output). Top: held-out LM loss against r, with the teacher and the ablated head (head mask 0).
# Bottom: recovery R = (L_abl − L_student)/(L_abl − L_teacher) from seed-mean losses.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "fig04", "smoke"  # set by the runner
inputs = ["results/param_allocation/data/replacement.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.param_allocation.recovery import at_sweep_heads, recovery_of_means, sweep_head_label, with_recovery
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
summary = pd.read_csv(inputs[0])
rows = at_sweep_heads(with_recovery(summary), summary)
layers = sorted(rows["layer"].unique())
seeds = summary["seed"].nunique()
head_dim = int(summary["head_dim"].iloc[0])
STYLE = {
    ("svd", "finetuned"): dict(color="#D55E00", linestyle="-", marker="o", label="SVD init, fine-tuned"),
    ("svd", "zero_shot"): dict(color="#D55E00", linestyle="--", marker="o", mfc="white", label="SVD init, zero-shot"),
    ("random", "finetuned"): dict(color="#0072B2", linestyle="-", marker="s", label="random init, fine-tuned"),
    ("random", "zero_shot"): dict(
        color="#0072B2", linestyle="--", marker="s", mfc="white", label="random init, zero-shot"
    ),
}

# %%
fig, axes = plt.subplots(2, len(layers), figsize=(6.2 * len(layers), 8.2), squeeze=False)
for column, layer in enumerate(layers):
    part = rows[rows["layer"] == layer]
    ax = axes[0, column]
    # Loss above the same seed's teacher: the teachers' own losses differ across seeds by more than
    # any replacement changes them, so absolute losses would hide the effect under the seed spread.
    for (init, stage), style in STYLE.items():
        cell = part[(part["init"] == init) & (part["stage"] == stage)]
        stats = (cell["eval_loss"] - cell["teacher_loss"]).groupby(cell["rank"]).agg(["mean", "std"])
        ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), capsize=3, **style)
    per_seed = part.groupby("seed")[["teacher_loss", "ablated_loss"]].first()
    ablated = float((per_seed["ablated_loss"] - per_seed["teacher_loss"]).mean())
    ax.axhline(0.0, color="black", lw=1.2, label="teacher")
    ax.axhline(ablated, color="grey", lw=1.2, linestyle=":", label="head ablated")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_title(f"layer {layer}, {sweep_head_label(part)} (d_h = {head_dim})")
    ax.set_ylabel("LM loss − teacher's loss (nats, symlog)")
    ax = axes[1, column]
    for (init, stage), style in STYLE.items():
        cell = part[(part["init"] == init) & (part["stage"] == stage)]
        recovery = recovery_of_means(cell, ["rank"])
        ax.plot(recovery.index, recovery.values, **style)
    ax.axhline(1.0, color="black", lw=1)
    ax.axhline(0.0, color="grey", lw=1, linestyle=":")
    ax.axhline(0.9, color="#009E73", lw=1, linestyle="-.", label="R = 0.9 (check)")
    ax.set_ylabel("recovery R")
    for ax in axes[:, column]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(part["rank"].unique()))
        ax.set_xticklabels([str(r) for r in sorted(part["rank"].unique())])
        ax.set_xlabel("student dimension r")
axes[0, 0].legend(fontsize=7)
axes[1, 0].legend(fontsize=7)
fig.suptitle(f"Single-head replacement in a trained decoder (mean ± sd over {seeds} seeds)")
note = "Reconstructed from the paper's description: model, layers, dimensions and fine-tuning inferred (catalog §1.6-1.7, Fig 4)."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Seed-mean losses, recovery from seed-mean losses, and the students' held-out distillation error
# (fraction of the teacher head's output not matched):

# %%
table = (
    rows.groupby(["layer", "init", "stage", "rank"])
    .agg(
        eval_loss=("eval_loss", "mean"),
        distill_error=("distill_error", "mean"),
        student_parameters=("student_parameters", "first"),
        seeds=("seed", "nunique"),
    )
    .reset_index()
)
table = table.merge(
    recovery_of_means(rows, ["layer", "init", "stage", "rank"]).reset_index(), on=["layer", "init", "stage", "rank"]
)
print(to_markdown(table))
