# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 1: the Pre-LN, parallel and simplified blocks
#
# He & Hofmann (ICLR 2024), Fig. 1: schematics of the standard Pre-LN block, the parallel block
# (GPT-J, PaLM) and the paper's most simplified block (SAS-P without norm), which has no skip
# connections, no value or projection matrices and no normalisation.
#
# Here the three blocks are drawn from the module inventory of the model objects that the
# training runs build (`repro.papers.simplified_blocks.block_structure.block_inventory`): a box appears only if
# the model has that component, a skip arrow only if the block adds its input back. The second
# layer is shown; the first layer of the simplified models keeps a trainable W^V = I + ΔW and,
# without norms, one LayerNorm on the embeddings (as the official code does).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig01", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/structure_inventory.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.simplified_blocks.block_diagram import draw_block
from repro.pipeline.plotting import label, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
inventory = pd.read_csv(inputs[0])
shown = [("pre_ln", "Pre-LN"), ("parallel", "Parallel"), ("sas_p_nonorm", "Ours (SAS-P, no norm)")]

# %%
fig, axes = plt.subplots(1, 3, figsize=(10, 5.2))
for ax, (variant, title) in zip(axes, shown):
    rows = inventory[(inventory["variant"] == variant) & (inventory["layer"] == 1)].to_dict("records")
    draw_block(ax, rows, title=title)
fig.suptitle("Transformer blocks, drawn from the model objects (layer 2)")
note = "Drawn from the code's module inventory, not copied from the paper."
save_figure(fig, results_dir, paper, item, scale, note=note)

# %% [markdown]
# Which components exist in each layer (✓ present, · removed), for the three blocks.

# %%
for variant, title in shown:
    rows = inventory[inventory["variant"] == variant]
    grid = rows.pivot(index="component", columns="layer", values="present").map(lambda p: "✓" if p else "·")
    grid.columns = [f"layer {c + 1}" for c in grid.columns]
    print(f"{title} ({label(variant)}):")
    print(to_markdown(grid.reset_index(), numparse=False))
