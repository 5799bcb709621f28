# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Table 2: best ΔBLEU with one head kept per layer
#
# Michel et al. (2019), Table 2: for each layer of each attention type of the WMT Transformer, all
# heads but one are masked (the other layers stay whole) and the best kept head is reported, chosen
# and evaluated on newstest2013. Most layers can be reduced to one head; the last Enc-Dec layer loses
# 13.56 BLEU.
#
# Here: the S2S model on the synthetic WMT analogue; the kept head is chosen per seed on the test set
# and its Δ BLEU on the same set is averaged over seeds ("*": p < alpha in most seeds, paired
# bootstrap); "kept head" lists the chosen head per seed (1-based). Paper columns: the paper's cells.

# %% tags=["parameters"]
results_dir = "results"
paper = "sixteen_heads"
item = "table02"
scale = "smoke"
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.tables import save_table

PAPER = {  # Table 2 of the paper, layers 1-6 ("*": significant at p < 0.01)
    "enc_self": ["−1.31*", "−0.16", "+0.12", "−0.15", "+0.02", "−0.36*"],
    "cross": ["+0.24*", "+0.06", "+0.05", "−0.24", "−1.55*", "−13.56*"],
    "dec_self": ["−0.03", "+0.12", "+0.18", "+0.17", "−0.04", "+0.24"],
}
ablation = pd.read_csv(inputs[0])
table = S.best_head_table(ablation, "mt", choose_on="test", alpha=alpha, paper=PAPER)
base = S.baseline_scores(ablation, "mt")
save_table(
    table,
    results_dir,
    paper,
    item,
    scale,
    note=f"Ours: base BLEU {', '.join(f'{b:.2f}' for b in base)}; the paper's base BLEU is 36.05. "
    "Cells: mean Δ BLEU over seeds of the best kept head; * = p<alpha in most seeds.",
)
