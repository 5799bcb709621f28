# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 8: three times the training tokens
#
# He & Hofmann (ICLR 2024), Fig. 8: CodeParrot eval loss against runtime for Pre-LN, SAS and
# SAS-P trained on 3× the tokens (≈120K steps, 2B tokens), next to the 1× runs. The simplified
# blocks still match or beat Pre-LN in wall-clock time.
#
# Here: the base runs (1×, solid) and runs with 3× the steps (dashed) against training time, mean
# over seeds. A run's time is its tokens at its block's benchmarked speed (the median training
# tokens/s of the interleaved timing of Fig. 5), not the seconds the run measured itself, which time
# the machine's other jobs too. The dotted line is the 3× Pre-LN run's total time t*, where the
# claims compare the blocks.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig08", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/fig08_curves.csv", "results/simplified_blocks/data/variants.csv"]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split
noise_runs = "results/simplified_blocks/data/fig26_curves.csv"  # the runs that set the run-to-run spread
speeds = [  # the interleaved timing of the blocks (Fig. 5)
    "results/simplified_blocks/data/throughput_models.csv",
    "results/simplified_blocks/data/throughput_timings.csv",
]

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.analysis.training_curves import mean_curve
from repro.papers.simplified_blocks.equal_budget import benchmarked_seconds, loss_at, total
from repro.papers.simplified_blocks.run_noise import gap_note
from repro.papers.simplified_blocks.variant_table import curves_and_variants
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style
from repro.pipeline.tables import to_markdown

use_style()
curves, facts = curves_and_variants(inputs[0], inputs[1])
curves = benchmarked_seconds(curves, pd.read_csv(speeds[1]), pd.read_csv(speeds[0]))
base_steps = facts["steps"].min()
facts["multiple"] = (facts["steps"] / base_steps).round(1)
long_pre_ln = facts[(facts["key"] == "pre_ln") & (facts["multiple"] == facts["multiple"].max())].index

# %%
fig, ax = plt.subplots(figsize=(7, 4.3))
for variant, row in facts.sort_values(["multiple", "key"]).iterrows():
    curve = mean_curve(curves, variant)
    style = line_style(row["key"])
    longer = row["multiple"] > 1
    ax.plot(
        curve["seconds"],
        curve["loss"],
        color=style["color"],
        linestyle="--" if longer else "-",
        marker=style["marker"] if longer else None,
        markevery=3,
        label=f"{label(row['key'])}, {row['multiple']:g}× steps",
    )
if len(long_pre_ln):
    ax.axvline(np.mean(list(total(curves, long_pre_ln[0]).values())), color="#333333", ls=":", lw=1)
evals = curves[curves["split"] == "eval"]
late = evals[evals["step"] >= evals["step"].max() * 0.2]
if len(late):
    ax.set_ylim(late["loss"].min() - 0.05, late["loss"].quantile(0.98) + 0.15)
ax.set_xlabel("training time at the benchmarked speed (s, this machine)")
ax.set_ylabel("eval loss (nats/token)")
ax.set_title(f"Loss against training time, 1× and {facts['multiple'].max():g}× steps")
ax.legend(fontsize=8)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale, note=gap_note(noise_runs))

# %% [markdown]
# Each 3× run's loss at the 3× Pre-LN run's total time t* (the same seed's), and its total time.

# %%
if len(long_pre_ln):
    longer = curves[curves["variant"].isin(facts.index[facts["multiple"] == facts["multiple"].max()])]
    at = loss_at(longer, total(curves, long_pre_ln[0])).groupby("variant")[["loss", "budget"]].mean()
    seconds = longer.groupby(["variant", "seed"])["seconds"].max().groupby("variant").mean()
    at = at.assign(training_seconds=seconds)
    at.index = [f"{label(facts.loc[v, 'key'])} ({facts.loc[v, 'multiple']:g}×)" for v in at.index]
    print(to_markdown(at.rename(columns={"loss": "eval loss at t*", "budget": "t* (s)"}).round(4)))
