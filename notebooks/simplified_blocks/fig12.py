# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 12: cosine against linear decay
#
# He & Hofmann (ICLR 2024), Fig. 12: eval loss against step for Pre-LN, SAS and SAS-P with a
# cosine and with a linear learning-rate decay (full run, and a zoom on the last half). Linear
# decay trails cosine for most of training but ends lower for all three blocks.
#
# Here: the base runs (linear decay, solid) and the same blocks with cosine decay (dashed), both
# with 5% warmup and the same peak LR; mean over seeds. Right: the last half of training.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig12", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig12_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt

from repro.analysis.training_curves import final_losses, mean_curve
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
last = curves["step"].max()
for ax, start in zip(axes, [0, last // 2]):
    for variant, row in facts.sort_values(["schedule", "key"]).iterrows():
        curve = mean_curve(curves, variant)
        curve = curve[curve.index >= start]
        style = line_style(row["key"])
        cosine = row["schedule"] == "cosine"
        ax.plot(
            curve.index,
            curve["loss"],
            color=style["color"],
            linestyle="--" if cosine else "-",
            marker=style["marker"] if cosine else None,
            markevery=2,
            label=f"{label(row['key'])}, {row['schedule']}",
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("eval loss (nats/token)")
axes[0].set_title("Whole run")
axes[1].set_title("Second half")
axes[1].legend(fontsize=8)
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
for ax in axes:
    draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %% [markdown]
# Final eval loss (mean of the last three evaluations, then over seeds) by block and schedule.

# %%
final = final_losses(curves).groupby("variant")["final_loss"].mean()
table = facts.assign(final=final).pivot_table(index="key", columns="schedule", values="final")
table.index = [label(k) for k in table.index]
print(to_markdown(table.round(4)))
