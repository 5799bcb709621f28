# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 26: loss against training step
#
# He & Hofmann (ICLR 2024), Fig. 26 (the per-step view of Fig. 5): eval loss on CodeParrot
# against training step for Pre-LN, Parallel, SAS, SAS-P, SAS-P without norm and Value-SkipInit.
# The paper's finding: SAS ≈ SAS-P ≈ Parallel ≈ Pre-LN per step; no norm is slightly worse
# (≈1.245 vs ≈1.155 at 40K steps); V-SkipInit is much slower (≈1.45).
#
# Here: decoder language models trained on the offline torch-sources corpus (the CodeParrot
# stand-in), at the scale named in the footer. Lines are the mean over seeds; the band spans
# the seeds' minimum and maximum.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig26", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig26_curves.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.read_csv(inputs[0])
order = [v for v in ["pre_ln", "parallel", "sas", "sas_p", "sas_p_nonorm", "vskipinit"] if v in set(curves["variant"])]
n_seeds = curves.groupby("variant")["seed"].nunique().min()

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
for ax, split in zip(axes, ["eval", "train"]):
    rows = curves[curves["split"] == split]
    for variant in order:
        by_step = rows[rows["variant"] == variant].groupby("step")["loss"]
        mean, low, high = by_step.mean(), by_step.min(), by_step.max()
        style = line_style(variant)
        ax.plot(mean.index, mean.values, label=label(variant), **style)
        if n_seeds > 1:
            ax.fill_between(mean.index, low.values, high.values, color=style["color"], alpha=0.15, linewidth=0)
    ax.set_xlabel("training step")
    ax.set_ylabel(f"{split} loss (nats/token)")
    ax.set_title(f"{split.capitalize()} loss")
# Zoom on the end of training, where the blocks are compared.
eval_rows = curves[curves["split"] == "eval"]
late = eval_rows[eval_rows["step"] >= eval_rows["step"].max() * 0.3]
if len(late):
    axes[0].set_ylim(late["loss"].min() - 0.05, late["loss"].quantile(0.98) + 0.1)
axes[1].legend(frameon=False, fontsize=8, loc="upper right")  # the empty corner of the train panel
fig.suptitle(f"Loss vs step on the code corpus (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})")
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
draw_reference_levels(axes[0], levels)  # the levels of the held-out split
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Final eval loss per block (mean of the last three evaluations, then over seeds), with the
# trainable parameter count. The paper's values are at 40K steps of an 18-layer, width-768 model
# and are shown for orientation only; the two columns are not comparable in absolute terms.

# %%
paper_loss = {"pre_ln": 1.155, "sas_p_nonorm": 1.245, "vskipinit": 1.45}
final = final_losses(curves).groupby("variant")["final_loss"].agg(["mean", "min", "max"])
params = curves.groupby("variant")["parameters"].first()
summary = pd.DataFrame(
    {
        "block": [label(v) for v in order],
        "final eval loss (ours, mean)": [final.loc[v, "mean"] for v in order],
        "min over seeds": [final.loc[v, "min"] for v in order],
        "max over seeds": [final.loc[v, "max"] for v in order],
        "parameters (ours)": [int(params[v]) for v in order],
        "paper loss at 40K steps (≈, read from text)": [paper_loss.get(v) for v in order],
    }
)
print(to_markdown(summary.round(4)))
