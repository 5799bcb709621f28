# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 10: the SAS block
#
# He & Hofmann (ICLR 2024), Fig. 10 (Eqs. 12-13): the "Simplified Attention Sub-block" block with
# norm. Shaped attention αI + βA − γC with W^Q = 0 at initialisation, no value or projection
# matrix (after layer 1), no attention skip; the MLP sub-block keeps its skip, with a trainable
# branch weight β_FF (0.1 at init).
#
# The drawing is made from the module inventory of the model object. Below it, the exact checks of
# the block at initialisation (float64): the attention sub-block maps X to Norm(X), the shaped
# attention matrix is the identity, and SAS equals SAS-P.

# %% tags=["parameters"]
results_dir = "results"
paper = "simplified_blocks"
item = "fig10"
scale = "smoke"
inputs = [
    "results/simplified_blocks/data/structure_inventory.csv",
    "results/simplified_blocks/data/structure_checks.csv",
]
variant = "sas"

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.simplified_blocks.block_diagram import draw_block
from repro.pipeline.plotting import label, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
inventory = pd.read_csv(inputs[0])
checks = pd.read_csv(inputs[1])

# %%
fig, axes = plt.subplots(1, 2, figsize=(7.5, 5.6))
for ax, layer in zip(axes, (0, 1)):
    rows = inventory[(inventory["variant"] == variant) & (inventory["layer"] == layer)].to_dict("records")
    draw_block(ax, rows, title=f"{label(variant)}, layer {layer + 1}")
fig.suptitle(f"The {label(variant)} block, drawn from the model object")
save_figure(
    fig, results_dir, paper, item, scale, note="Drawn from the code's module inventory, not copied from the paper."
)

# %%
mine = checks[checks["check"].isin(["identity_at_init", "shaped_matrix_is_identity", "sas_equals_sas_p_at_init"])]
mine = mine[mine["variant"] == variant]
print(to_markdown(mine[["check", "setting", "value", "tolerance", "passed"]]))
