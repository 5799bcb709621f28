# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figures 10 and 11: the SAS and SAS-P blocks
#
# He & Hofmann (ICLR 2024), Fig. 10 (Eqs. 12-13): the "Simplified Attention Sub-block" block with
# norm. Shaped attention αI + βA − γC with W^Q = 0 at initialisation, no value or projection
# matrix (after layer 1), no attention skip; the MLP sub-block keeps its skip, with a trainable
# branch weight β_FF (0.1 at init). Fig. 11: SAS-P, the parallel block with the simplified attention
# sub-block and norm. Attention and MLP read the same normalised input and their outputs are added
# with trainable weights β_SA (1) and β_FF (0.1); there is no skip connection at all, no value or
# projection matrix (after layer 1), and one shared norm.
#
# The drawing is made from the module inventory of the model object. Below it, the exact checks of
# the block at initialisation (float64): the attention sub-block maps X to Norm(X), the shaped
# attention matrix is the identity (with and without norms), and SAS equals SAS-P.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig10", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/structure_inventory.csv",
    "results/simplified_blocks/data/structure_checks.csv",
]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.simplified_blocks.block_diagram import draw_block
from repro.pipeline.plotting import label, save_figure, use_style
from repro.pipeline.tables import to_markdown

# The block each item draws, and the variants whose exact checks it lists.
VARIANT = {"fig10": "sas", "fig11": "sas_p"}[item]
CHECKED = {"fig10": ["sas"], "fig11": ["sas_p", "sas_p_nonorm", "sas"]}[item]
use_style()
inventory = pd.read_csv(inputs[0])
checks = pd.read_csv(inputs[1])

# %%
fig, axes = plt.subplots(1, 2, figsize=(7.5, 5.6))
for ax, layer in zip(axes, (0, 1)):
    rows = inventory[(inventory["variant"] == VARIANT) & (inventory["layer"] == layer)].to_dict("records")
    draw_block(ax, rows, title=f"{label(VARIANT)}, layer {layer + 1}")
fig.suptitle(f"The {label(VARIANT)} block, drawn from the model object")
note = "Drawn from the code's module inventory, not copied from the paper."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %%
mine = checks[checks["check"].isin(["identity_at_init", "shaped_matrix_is_identity", "sas_equals_sas_p_at_init"])]
mine = mine[mine["variant"].isin(CHECKED)]
print(to_markdown(mine[["check", "variant", "setting", "value", "tolerance", "passed"]]))
