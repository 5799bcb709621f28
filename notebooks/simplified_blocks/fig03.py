# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 3: the value/projection residual weight β
#
# He & Hofmann (ICLR 2024), Fig. 3: final eval loss of skipless-attention models (shaped attention,
# MLP skip) whose value and projection matrices are W = α·W_init + β·ΔW with fixed α = 1 and fixed
# β (Eq. 6), against β, for orthogonal and identity W_init, with Pre-LN and V-SkipInit as
# references. The loss falls monotonically as β → 0, identity beats orthogonal at every β, and
# identity at β = 0 (W^V = W^P = I) reaches the Pre-LN loss (1.178).
#
# Here: one run per (W_init, β, seed) on the code corpus; points are the mean over seeds of the
# final eval loss (mean of the last three evaluations); bars are each point's 95 % interval with the
# run-to-run spread pooled over Fig 26's runs, for orientation (laptop: one seed per point, which the
# claims judge only with seeds of its own). The
# paper does not give its β grid; we use the β values in the footer's configuration.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig03", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig03_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.analysis.training_curves import final_losses, seed_spread
from repro.papers.simplified_blocks.run_noise import bars_note, errorbar_over_seeds, loss_noise
from repro.pipeline.plotting import OKABE_ITO, draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves = pd.read_csv(inputs[0])
facts = pd.read_csv(inputs[1]).set_index("variant")
final = final_losses(curves)
noise = loss_noise(pd.read_csv(noise_runs))
final = final.join(facts[["spec_value", "spec_reparam_init", "spec_reparam_beta", "spec_reparam_tie"]], on="variant")
grid = final[(final["spec_value"] == "reparam") & (final["spec_reparam_tie"] == "none")]
INIT_STYLE = {
    "orthogonal": (OKABE_ITO["green"], "s", "orthogonal $W_{init}$"),
    "identity": (OKABE_ITO["purple"], "o", "identity $W_{init}$"),
}

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for init, rows in grid.groupby("spec_reparam_init"):
    colour, marker, text = INIT_STYLE[init]
    errorbar_over_seeds(ax, rows, "spec_reparam_beta", noise, color=colour, marker=marker, label=text)
for reference in ("pre_ln", "vskipinit"):
    if reference in set(final["variant"]):
        level = final[final["variant"] == reference]["final_loss"].mean()
        ax.axhline(level, color=line_style(reference)["color"], ls="--", lw=1.2, label=label(reference))
ax.set_xlabel(r"fixed residual weight $\beta_V = \beta_P$")
ax.set_ylabel("final eval loss (nats/token)")
ax.set_title("Skipless attention: loss against the value/projection weight β")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
draw_reference_levels(ax, levels)
note = f"β grid reconstructed from the paper's description (its grid is not given). {bars_note(noise)}"
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
names = ["W_init", "beta", "final eval loss (mean)", "min over seeds", "max over seeds", "seeds"]
table = seed_spread(grid, ["spec_reparam_init", "spec_reparam_beta"], names)
print(to_markdown(table.round(4)))
