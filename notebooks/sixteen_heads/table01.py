# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Table 1: ΔBLEU of every Enc-Enc head
#
# Michel et al. (2019), Table 1: BLEU change on newstest2013 when one Enc-Enc head of the WMT
# Transformer is masked (6 layers × 16 heads, base BLEU 36.05); underlined cells are significant
# at p < 0.01 (paired bootstrap). Only 8 of 96 heads are significant, 4 of them positive.
#
# Here: the encoder self-attention heads of the S2S model on the synthetic WMT analogue. Each cell is
# Δ BLEU averaged over seeds; `*` marks a head significant (paired bootstrap, 1000 resamples,
# p < alpha) in more than half of the seeds. The paper's significant cells of the same layer index
# are listed beside ours (our model has fewer layers and heads, so cells do not correspond one to one).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "table01", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/ablation.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.tables import save_table

ablation = pd.read_csv(inputs[0])
single = S.rows(ablation, "mt", "single", "test")
enc = single[single["type"] == "enc_self"]
n_seeds = enc["seed"].nunique()
cells = enc.groupby(["layer", "head"]).agg(
    delta=("delta", "mean"), significant=("p_value", lambda p: int((p < alpha).sum()))
)
cells["marked"] = cells["significant"] > n_seeds / 2

PAPER_SIGNIFICANT = {  # Table 1 of the paper: the 8 significant cells (layer -> "Hhead Δ")
    1: "H6 −0.53, H8 −0.33",
    2: "H4 +0.20, H11 +0.15",
    3: "H14 +0.24",
    4: "",
    5: "H1 −0.31, H10 +0.21",
    6: "H3 −0.31",
}
n_layers = int(enc["layer"].max()) + 1
n_heads = int(enc["head"].max()) + 1
rows = []
for layer in range(max(n_layers, 6)):
    row = {"layer": layer + 1}
    for head in range(n_heads):
        if (layer, head) in cells.index:
            cell = cells.loc[(layer, head)]
            row[f"H{head + 1}"] = f"{cell['delta']:+.2f}{'*' if cell['marked'] else ''}"
        else:
            row[f"H{head + 1}"] = ""
    in_layer = cells.loc[layer] if layer < n_layers else None
    row["significant heads"] = "" if in_layer is None else int(in_layer["marked"].sum())
    row["paper_significant_cells"] = PAPER_SIGNIFICANT.get(layer + 1, "")
    rows.append(row)
table = pd.DataFrame(rows)
base = S.baseline_scores(ablation, "mt")
marked = cells["marked"]
note = (
    f"Ours: base BLEU {', '.join(f'{b:.2f}' for b in base)} (seeds {', '.join(map(str, base.index))}); "
    f"{int(marked.sum())} of {len(marked)} Enc-Enc heads significant at p<{alpha} in most seeds "
    f"({int((cells['delta'][marked] > 0).sum())} positive). "
    "Paper (paper_* column and this note): base BLEU 36.05; 8 of 96 significant (4 negative, 4 positive); "
    "all other cells within [−0.19, +0.15]. Cells are mean Δ BLEU over seeds; * = p<alpha in most seeds. "
    f"The paper's encoder has 6 layers of 16 heads, ours {n_layers} of {n_heads}: rows {n_layers + 1}-6 hold the "
    "paper's cells only, and a row of ours is not the paper's layer of the same index."
)
save_table(table, results_dir, paper, item, scale, note=note)
