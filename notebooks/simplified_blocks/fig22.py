# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 22: with the attention skip (Pre-LN) the ratios do not vanish
#
# He & Hofmann (ICLR 2024), Fig. 22 (ICLR version only): Fig. 4 for a Pre-LN block, which keeps its
# attention skip, with identity-initialised reparameterised W^V, W^P and trainable gains. Many
# ratios *increase*: without the pressure of a missing skip, training keeps the matrices.
#
# Here: a Pre-LN block (attention skip, softmax attention) with W^V = α_V·W_init + β_V·ΔW and W^P
# alike, α and β trainable (init 1 and 0.2, no weight decay on gains), every gain logged. Lines are layers (mean over
# seeds, band = seed range); the dotted line marks 0.05.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig22", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig22_gains.csv", "results/simplified_blocks/data/fig04_gains.csv"]

# %%
import pandas as pd

from repro.papers.simplified_blocks.gain_trajectories import final, ratios
from repro.papers.simplified_blocks.plots import final_ratio_table, ratio_figure
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
gains = pd.read_csv(inputs[0])

# %%
fig = ratio_figure(gains, "Pre-LN, identity W_init")
note = "Gain initialisation (α = 1, β = 0.2) reconstructed from the paper's description of Fig 4."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
last = final(ratios(gains))
print(to_markdown(final_ratio_table(last).round(4)))

# %% [markdown]
# Median final |β/α| over layers, V/P and seeds: this Pre-LN run against the skipless SAS run of Fig 4.

# %%
skipless = final(ratios(pd.read_csv(inputs[1])))
medians = pd.DataFrame(
    {
        "model": ["Pre-LN (this figure)", "SAS (Fig 4)"],
        "median final |β/α|": [last["ratio"].abs().median(), skipless["ratio"].abs().median()],
    }
)
print(to_markdown(medians.round(4)))
