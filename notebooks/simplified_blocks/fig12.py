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

from repro.papers.simplified_blocks.plots import final_loss_table, setting_line, whole_and_second_half
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])

# %%
lines = [
    (variant, setting_line(row["key"], row["schedule"], row["schedule"] == "cosine"))
    for variant, row in facts.sort_values(["schedule", "key"]).iterrows()
]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
whole_and_second_half(axes, curves, lines, levels)
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %% [markdown]
# Final eval loss (mean of the last three evaluations, then over seeds) by block and schedule.

# %%
print(to_markdown(final_loss_table(curves, facts, "schedule").round(4)))
