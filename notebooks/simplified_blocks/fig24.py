# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 24: trainable first-layer W^V against W^V_1 = I
#
# He & Hofmann (ICLR 2024), Fig. 24: SAS and SAS-P keep one value matrix, W^V_1 = I + ΔW in the
# first layer (trainable, ΔW = 0 at init); the figure compares it with W^V_1 = I fixed (two
# panels: whole run and a zoom on 20K–45K steps). The trainable W^V_1 gives a very small gain.
#
# Here: the base SAS and SAS-P runs (trainable W^V_1, solid) and the same blocks with W^V_1 = I
# (dashed); Pre-LN in grey for reference; mean over seeds. Right: the last half of training.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig24", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig24_curves.csv", "results/simplified_blocks/data/variants.csv"]
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
facts["first_value"] = ["W^V_1 = I" if v == "identity" else "trainable W^V_1" for v in facts["spec_first_value"]]

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
last = curves["step"].max()
for ax, start in zip(axes, [0, last // 2]):
    for variant, row in facts.sort_values(["key", "first_value"]).iterrows():
        curve = mean_curve(curves, variant)
        curve = curve[curve.index >= start]
        if row["key"] == "pre_ln":
            ax.plot(curve.index, curve["loss"], color="#999999", linestyle=":", label="Pre-LN (reference)")
            continue
        style = line_style(row["key"])
        fixed = row["spec_first_value"] == "identity"
        ax.plot(
            curve.index,
            curve["loss"],
            color=style["color"],
            linestyle="--" if fixed else "-",
            marker=style["marker"] if fixed else None,
            markevery=2,
            label=f"{label(row['key'])}, {row['first_value']}",
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
# Final eval loss (mean of the last three evaluations, then over seeds).

# %%
final = final_losses(curves).groupby("variant")["final_loss"].mean()
table = (
    facts[facts["key"] != "pre_ln"].assign(final=final).pivot_table(index="key", columns="first_value", values="final")
)
table.index = [label(k) for k in table.index]
print(to_markdown(table.round(4)))
