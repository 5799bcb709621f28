# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Tables 2, 3, 5 and 6: one head kept per layer
#
# Michel et al. (2019): in each layer all heads but one are masked (the other layers stay whole) and
# the best kept head is reported.
# - Table 2 (WMT Transformer, each attention type): chosen and evaluated on newstest2013. Most layers
#   can be reduced to one head; the last Enc-Dec layer loses 13.56 BLEU.
# - Table 3 (BERT): chosen and evaluated on MNLI-matched. Every layer loses less than 1 point; none of
#   the changes is significant at p < 0.01.
# - Table 5 (Appendix A): as Table 2, but the kept head is chosen on newstest2013 and its Δ BLEU
#   reported on newstest2014, removing the optimism of choosing on the test set itself. Half of the
#   18 cells (9) still show no significant change; the last Enc-Dec layer loses 18.89.
# - Table 6 (Appendix A): as Table 3, but the kept head of each layer is chosen on 5,000 random MNLI
#   training examples and Δ accuracy is reported on MNLI-matched. No layer shows a significant change.
#
# Here: the S2S model on the synthetic WMT analogue (Tables 2, 5; paired bootstrap) and the CLS model
# on the synthetic MNLI analogue (Tables 3, 6; McNemar's exact test). The kept head is chosen per
# seed on the test set (Tables 2, 3) or on the held-out selection split (Tables 5, 6), and its Δ on
# the test set is averaged over seeds ("*": p < alpha in most seeds); "kept head" lists the chosen
# head per seed (1-based). Paper columns: the paper's cells.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "table02", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.tables import save_table

# The paper's cells ("*": significant at p < 0.01): WMT layers 1-6, BERT layers 1-12 (none significant).
PAPER = {
    "table02": {
        "enc_self": ["−1.31*", "−0.16", "+0.12", "−0.15", "+0.02", "−0.36*"],
        "cross": ["+0.24*", "+0.06", "+0.05", "−0.24", "−1.55*", "−13.56*"],
        "dec_self": ["−0.03", "+0.12", "+0.18", "+0.17", "−0.04", "+0.24"],
    },
    "table03": {"self": "−0.01 +0.10 −0.14 −0.53 −0.29 −0.52 +0.05 −0.72 −0.96 +0.07 −0.19 −0.12".split()},
    "table05": {
        "enc_self": ["−1.96*", "−0.57*", "−0.45*", "−0.30", "−0.32", "−0.67*"],
        "cross": ["+0.02", "+0.09", "−0.42*", "−0.60*", "−2.75*", "−18.89*"],
        "dec_self": ["+0.03", "−0.13", "0.00", "−0.31", "−0.66*", "−0.03"],
    },
    "table06": {"self": "−0.01 −0.02 −0.26 −0.53 −0.29 −0.52 +0.05 −0.72 −0.96 +0.07 −0.19 −0.15".split()},
}
task = {"table02": "mt", "table05": "mt", "table03": "nli", "table06": "nli"}[item]
choose_on = "test" if item in ("table02", "table03") else "selection"
ablation = pd.read_csv(inputs[0])
table = S.best_head_table(ablation, task, choose_on=choose_on, alpha=alpha, paper=PAPER[item])
if choose_on == "test":
    base = S.baseline_scores(ablation, task)
    note = {
        "mt": f"Ours: base BLEU {', '.join(f'{b:.2f}' for b in base)}; the paper's base BLEU is 36.05. "
        "Cells: mean Δ BLEU over seeds of the best kept head; * = p<alpha in most seeds.",
        "nli": f"Ours: base accuracy {', '.join(f'{b:.2f}' for b in base)}%. Cells: mean Δ accuracy (points) over "
        "seeds of the best kept head; * = p<alpha in most seeds. Paper: none significant.",
    }[task]
else:
    source = S.rows(ablation, task, "keep_one", "selection")["source"].iloc[0]
    metric = {"mt": "Δ BLEU", "nli": "Δ accuracy (points)"}[task]
    note = f"Kept head chosen on {source}, {metric} on the test set, mean over seeds; * = p<alpha in most seeds."
save_table(table, results_dir, paper, item, scale, note=note)
