# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Table 3: best Δ accuracy with one head kept per layer (BERT)
#
# Michel et al. (2019), Table 3: in each BERT layer all heads but one are masked and the best kept
# head is reported (chosen and evaluated on MNLI-matched). Every layer loses less than 1 point; none
# of the changes is significant at p < 0.01.
#
# Here: the CLS model on the synthetic MNLI analogue; the kept head is chosen per seed on the test set
# and its Δ accuracy (points) on the same set is averaged over seeds ("*": p < alpha in most seeds,
# McNemar's exact test). Paper column: the paper's cells.

# %% tags=["parameters"]
results_dir = "results"
paper = "sixteen_heads"
item = "table03"
scale = "smoke"
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.tables import save_table

PAPER = {
    "self": ["−0.01", "+0.10", "−0.14", "−0.53", "−0.29", "−0.52", "+0.05", "−0.72", "−0.96", "+0.07", "−0.19", "−0.12"]
}  # Table 3 of the paper, layers 1-12, none significant
ablation = pd.read_csv(inputs[0])
table = S.best_head_table(ablation, "nli", choose_on="test", alpha=alpha, paper=PAPER)
base = S.baseline_scores(ablation, "nli")
save_table(
    table,
    results_dir,
    paper,
    item,
    scale,
    note=f"Ours: base accuracy {', '.join(f'{b:.2f}' for b in base)}%. Cells: mean Δ accuracy (points) over "
    "seeds of the best kept head; * = p<alpha in most seeds. Paper: none significant.",
)
