# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 4: pruning one attention type alone (WMT)
#
# Michel et al. (2019), Fig. 4: the importance ranking of Fig. 3 restricted to one attention type
# (96 heads each), the other two types left whole; BLEU against the share of that type's heads
# pruned. Enc-Dec attention falls fastest (pruning more than 60% of it is catastrophic), while the
# self-attention types keep about 30 BLEU with only 20% of their heads.
#
# Here: the S2S model (WMT analogue), each type's heads pruned by layer-normalised importance at
# ⌈N·p/100⌉ for p = 0-90%, on the in-domain test set. Lines are means over seeds (bands: min-max).

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig04", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/pruning.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.plotting import save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
pruning = pd.read_csv(inputs[0])
TYPES = {
    "enc_self": ("Enc-Enc", "#d62728", "o"),
    "cross": ("Enc-Dec", "#1f77b4", "^"),
    "dec_self": ("Dec-Dec", "#2ca02c", "s"),
}

# %%
fig, ax = plt.subplots(figsize=(5.5, 4))
for kind, (name, colour, marker) in TYPES.items():
    rows = S.curve(pruning, "mt", "importance", scope=kind)
    by_level = rows.groupby("percent")["score"]
    mean = by_level.mean()
    ax.plot(mean.index, mean.values, color=colour, marker=marker, label=name)
    if rows["seed"].nunique() > 1:
        ax.fill_between(mean.index, by_level.min().values, by_level.max().values, color=colour, alpha=0.15, linewidth=0)
base = rows.groupby("seed")["baseline"].first().mean()
ax.axhline(base, color="#999999", linewidth=0.8, linestyle="--", label="unpruned (mean over seeds)")
ax.set_xlabel("heads of the type pruned (%)")
ax.set_ylabel("BLEU")
ax.set_ylim(bottom=0)
ax.legend(fontsize=8, loc="lower left")
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Per seed: the mean BLEU over 0-90% of each type pruned (the AUC of the claims) and BLEU at 60-70%.

# %%
summary = []
for kind, (name, _, _) in TYPES.items():
    for seed, g in S.curve(pruning, "mt", "importance", scope=kind).groupby("seed"):
        base = float(g["baseline"].iloc[0])
        summary.append(
            dict(
                type=name,
                seed=seed,
                baseline=base,
                auc_0_90=S.curve_auc(g["percent"], g["score"], 90),
                bleu_60_70=float(g[g["percent"].isin([60, 70])]["score"].mean()),
            )
        )
print(to_markdown(pd.DataFrame(summary).round(3)))
