# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Figure 6: pruning curves on four more tasks
#
# Michel et al. (2019), Appendix B, Fig. 6: BERT fine-tuned on (a) SST-2 (accuracy), (b) CoLA
# (Matthews correlation) and (c) MRPC (F1), and (d) the IWSLT De-En Transformer (BLEU), pruned by
# layer-normalised importance without retraining. Up to 60% (SST-2) or 50% (CoLA, MRPC) of heads go
# without noticeable loss; IWSLT is flat to about 20% and drops sharply after about 60%.
#
# Here: a CLS model on each of the synthetic SST-2, CoLA and MRPC analogues (0-100%, ⌊N·p/100⌋) and
# the S2S model on the IWSLT analogue (0-90%, ⌈N·p/100⌉), on each task's test set; the same
# importance-pruning code as Fig. 3. Lines are means over seeds.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "fig06", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/pruning.csv"]

# %%
import matplotlib.pyplot as plt
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.gates_and_nulls import CONSTANT_SCORE
from repro.pipeline.plotting import line_style, mark_levels, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
pruning = pd.read_csv(inputs[0])
PANELS = [
    ("sst2", "(a) SST-2 analogue", "accuracy (%)"),
    ("cola", "(b) CoLA analogue", "Matthews corr. (×100)"),
    ("mrpc", "(c) MRPC analogue", "F1 (×100)"),
    ("iwslt", "(d) IWSLT analogue", "BLEU"),
]

# %%
fig, axes = plt.subplots(1, 4, figsize=(14, 3.6))
summary = []
for ax, (task, title, unit) in zip(axes, PANELS):
    rows = S.curve(pruning, task, "importance")
    by_level = rows.groupby("percent")["score"]
    mean = by_level.mean()
    ax.plot(mean.index, mean.values, **line_style("importance"))
    if rows["seed"].nunique() > 1:
        ax.fill_between(mean.index, by_level.min().values, by_level.max().values, alpha=0.15, linewidth=0)
    ax.axhline(rows.groupby("seed")["baseline"].first().mean(), color="#999999", linewidth=0.8, linestyle="--")
    mark_levels(ax, {"constant predictor": CONSTANT_SCORE[task], "perfect": 100.0}, side="auto")
    ax.set_title(title)
    ax.set_xlabel("heads pruned (%)")
    ax.set_ylabel(unit)
    for seed, g in rows.groupby("seed"):
        base = float(g["baseline"].iloc[0])
        summary.append(
            dict(
                task=task,
                seed=seed,
                baseline=base,
                safe_percent=S.safe_percent(g, keep_share=task == "iwslt"),
                score_at_90=float(g.loc[g["percent"] == 90, "score"].iloc[0]),
                kept_at_90=float(
                    (g.loc[g["percent"] == 90, "score"].iloc[0] - CONSTANT_SCORE[task]) / (base - CONSTANT_SCORE[task])
                ),
            )
        )
save_figure(fig, results_dir, paper, item, scale)

# %% [markdown]
# Per task and seed: the pruning level at which the score first falls below its floor, interpolated
# between levels (CLS: baseline − 1 point; S2S: 97% of baseline BLEU), the score at 90% pruned, and the share of what the unpruned model
# adds over a constant predictor (dotted line) that is left there (`kept_at_90`; the collapse claims).

# %%
print(to_markdown(pd.DataFrame(summary).round(3)))
