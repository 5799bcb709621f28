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

from repro.papers.simplified_blocks.plots import final_loss_table, setting_line, whole_and_second_half
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])
facts["first_value"] = ["$W^V_1 = I$" if v == "identity" else "trainable $W^V_1$" for v in facts["spec_first_value"]]

# %%
lines = []
for variant, row in facts.sort_values(["key", "first_value"]).iterrows():
    if row["key"] == "pre_ln":
        lines.append((variant, dict(color="#999999", linestyle=":", label="Pre-LN (reference)")))
        continue
    fixed = row["spec_first_value"] == "identity"
    lines.append((variant, setting_line(row["key"], row["first_value"], fixed)))
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
whole_and_second_half(axes, curves, lines, levels)
fig.set_layout_engine("tight")  # not tight_layout(), which warns that it replaces the constrained layout
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %% [markdown]
# Final eval loss (mean of the last three evaluations, then over seeds).

# %%
print(to_markdown(final_loss_table(curves, facts[facts["key"] != "pre_ln"], "first_value").round(4)))
