# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Table 6: one head kept, chosen on training examples (BERT)
#
# Michel et al. (2019), Appendix A, Table 6: as Table 3, but the kept head of each layer is chosen on
# 5,000 random MNLI training examples and Δ accuracy is reported on MNLI-matched. No layer shows a
# significant change.
#
# Here: the CLS model on the synthetic MNLI analogue; the head is chosen per seed on a fixed random
# subset of the training split and Δ accuracy (points) is reported on the test set, averaged over
# seeds ("*": p < alpha in most seeds, McNemar's exact test). Paper column: the paper's cells.

# %% tags=["parameters"]
results_dir = "results"
paper = "sixteen_heads"
item = "table06"
scale = "smoke"
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.tables import save_table

PAPER = {
    "self": ["−0.01", "−0.02", "−0.26", "−0.53", "−0.29", "−0.52", "+0.05", "−0.72", "−0.96", "+0.07", "−0.19", "−0.15"]
}  # Table 6 of the paper, layers 1-12, none significant
ablation = pd.read_csv(inputs[0])
table = S.best_head_table(ablation, "nli", choose_on="selection", alpha=alpha, paper=PAPER)
source = S.rows(ablation, "nli", "keep_one", "selection")["source"].iloc[0]
save_table(
    table,
    results_dir,
    paper,
    item,
    scale,
    note=f"Kept head chosen on {source}, Δ accuracy (points) on the test set, mean over seeds; "
    "* = p<alpha in most seeds.",
)
