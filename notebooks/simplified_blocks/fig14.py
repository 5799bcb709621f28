# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 14: final loss against the β_FF initialisation
#
# He & Hofmann (ICLR 2024), Fig. 14: CodeParrot eval loss after 40K steps of SAS against the
# initial value of the (trainable) MLP branch weight β_FF. The paper picks β_FF = 0.1 at 18 layers
# and argues β_FF = O(1/√L); its grid and the curve's shape are not stated in the text.
#
# Here: SAS with β_FF from the grid {0.03, 0.1, 0.3, 1} at init (ours; the laptop scale trains 0.03,
# 0.1 and 1; the rule 0.1·√(18/L) would give ≈0.21 at our depth), final eval loss (mean of the last three evaluations) per seed and mean;
# the Pre-LN base run is the horizontal reference.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig14", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig14_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.papers.simplified_blocks.run_noise import bars_note, half_width, loss_noise
from repro.pipeline.plotting import draw_reference_levels, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.read_csv(inputs[0])
facts = pd.read_csv(inputs[1]).set_index("variant")
final = final_losses(curves).merge(facts[["block", "spec_mlp_gain"]], left_on="variant", right_index=True)
sas = final[final["block"] == "sas"]
grid = sas.groupby("spec_mlp_gain")["final_loss"].agg(["mean", "min", "max", "count"])
noise = loss_noise(pd.read_csv(noise_runs))

# %%
fig, ax = plt.subplots(figsize=(6, 4))
style = line_style("sas")
ax.scatter(sas["spec_mlp_gain"], sas["final_loss"], color=style["color"], alpha=0.4, s=18, label="SAS, one seed")
ax.errorbar(
    grid.index,
    grid["mean"],
    yerr=None if noise is None else [half_width(noise, n) for n in grid["count"]],
    color=style["color"],
    marker=style["marker"],
    capsize=3,
    label="SAS, mean over seeds",
)
pre_ln = final[final["block"] == "pre_ln"]["final_loss"]
if len(pre_ln):
    ax.axhline(pre_ln.mean(), color=line_style("pre_ln")["color"], ls=":", label="Pre-LN")
ax.set_xscale("log")
ax.set_xticks(list(grid.index))
ax.set_xticklabels([f"{b:g}" for b in grid.index])
ax.set_xlabel("β_FF at initialisation (trainable)")
ax.set_ylabel("final eval loss (nats/token)")
ax.set_title("SAS: final loss vs β_FF init")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)
save_figure(
    fig, results_dir, paper, item, scale, note=f"Grid reconstructed from the paper's description. {bars_note(noise)}"
)

# %%
print(to_markdown(grid.rename_axis("beta_FF init").round(4)))
