# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Figure 5: loss against wall-clock time
#
# He & Hofmann (ICLR 2024), Fig. 5: eval loss on CodeParrot against training time (A5000, ≈10 h)
# for V-SkipInit, Pre-LN, SAS, SAS-P, SAS-P without norm and Parallel. SAS is slightly faster than
# Pre-LN in time, SAS-P faster still and level with Parallel with 13% fewer parameters.
#
# Here (left): the six runs of Fig 26 against training time, mean over seeds at each evaluation. A
# run's time is its tokens at its block's benchmarked speed (right panel: median training tokens/s
# over the interleaved rounds), not the seconds the run measured itself, which time the machine's
# other jobs too; the dotted line is Pre-LN's total time t*, at which the claims compare the blocks.
# Right: training and inference throughput relative to Pre-LN, measured with all blocks interleaved
# in one process that holds every core: the mean of the per-round ratios (paired within a round) and
# its 95% interval over rounds, as the speed claims judge them; the black ticks are the ratio the FLOP
# count predicts (Pre-LN's FLOPs per token ÷ the block's). The table gives both times.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "fig05", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/fig26_curves.csv",
    "results/simplified_blocks/data/throughput_models.csv",
    "results/simplified_blocks/data/throughput_timings.csv",
]
levels = "results/simplified_blocks/data/lm_reference_levels.json"  # reference levels of the held-out split

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.papers.simplified_blocks.equal_budget import benchmarked_seconds, loss_at, total
from repro.pipeline.decisions import seed_interval
from repro.pipeline.plotting import draw_reference_levels, label, line_style, save_figure, use_style, zoom_to_late
from repro.pipeline.tables import to_markdown

use_style()
measured = pd.read_csv(inputs[0])
speeds = pd.read_csv(inputs[1]).set_index("variant")
timings = pd.read_csv(inputs[2])
curves = benchmarked_seconds(measured, timings, speeds.reset_index())
# A round times every block back to back, so the ratio to Pre-LN within a round is paired.
round_ratios = {
    mode: table.pivot(index="round", columns="variant", values="tokens_per_s").pipe(
        lambda t: t.div(t["pre_ln"], axis=0)
    )
    for mode, table in timings.groupby("mode")
}
order = [v for v in ["vskipinit", "pre_ln", "sas", "sas_p", "sas_p_nonorm", "parallel"] if v in set(curves["variant"])]
evals = curves[curves["split"] == "eval"]
t_star = total(curves, "pre_ln")

# %%
fig, (ax, ax_speed) = plt.subplots(1, 2, figsize=(11, 4.3), gridspec_kw={"width_ratios": [1.6, 1]})
for variant in order:
    by_step = evals[evals["variant"] == variant].groupby("step")[["seconds", "loss"]].mean()
    ax.plot(by_step["seconds"], by_step["loss"], label=label(variant), markevery=3, **line_style(variant))
ax.axvline(np.mean(list(t_star.values())), color="#333333", ls=":", lw=1, label="Pre-LN's training time")
zoom_to_late(ax, evals)
ax.set_xlabel("training time at the benchmarked speed (s, this machine)")
ax.set_ylabel("eval loss (nats/token)")
ax.set_title("Loss against training time")
ax.legend(fontsize=8)

shown = [v for v in order if v in speeds.index]
x = np.arange(len(shown))
for offset, mode, style in ((-0.2, "train", {}), (0.2, "inference", {"alpha": 0.5, "hatch": "//"})):
    intervals = [seed_interval(round_ratios[mode][v]) for v in shown]
    mean = np.array([i.estimate for i in intervals])
    whiskers = np.vstack([mean - [i.low for i in intervals], [i.high for i in intervals] - mean])
    ax_speed.bar(
        x + offset,
        mean,
        width=0.4,
        yerr=whiskers,
        capsize=2,
        ecolor="#333333",
        label="training" if mode == "train" else "inference",
        color=[line_style(v)["color"] for v in shown],
        **style,
    )
    flops = speeds[f"{mode}_flops_per_token"]
    ax_speed.scatter(
        x + offset,
        flops["pre_ln"] / flops[shown],
        marker="_",
        s=200,
        color="black",
        zorder=3,
        label="FLOP-predicted" if mode == "train" else None,
    )
ax_speed.axhline(1.0, color="#333333", lw=0.8)
ax_speed.set_xticks(x)
ax_speed.set_xticklabels([label(v) for v in shown], rotation=30, ha="right", fontsize=8)
ax_speed.set_ylabel("tokens/s relative to Pre-LN")
ax_speed.set_title("Throughput (interleaved timing)")
ax_speed.legend(fontsize=8)
low = min(min(r[shown].mean().min() for r in round_ratios.values()), 1.0)
ax_speed.set_ylim(max(0.0, low - 0.15), None)
draw_reference_levels(ax, levels)
save_figure(fig, results_dir, paper, item, scale)

# %%
at = (
    loss_at(curves, t_star)
    .groupby("variant")[["loss", "finished_before"]]
    .agg({"loss": "mean", "finished_before": "all"})
)
totals = evals.groupby(["variant", "seed"])["seconds"].max().groupby("variant").mean()
own = measured[measured["split"] == "eval"].groupby(["variant", "seed"])["seconds"].max().groupby("variant").mean()
summary = pd.DataFrame(
    {
        "block": [label(v) for v in order],
        "training seconds, benchmarked (mean)": [totals[v] for v in order],
        "training seconds, as the run measured (mean)": [own[v] for v in order],
        "eval loss at t* (mean)": [at.loc[v, "loss"] for v in order],
        "finished before t*": [bool(at.loc[v, "finished_before"]) for v in order],
        "train tokens/s vs Pre-LN": [speeds.loc[v, "speed_train"] if v in speeds.index else None for v in order],
        "inference tokens/s vs Pre-LN": [
            speeds.loc[v, "speed_inference"] if v in speeds.index else None for v in order
        ],
        "FLOP-predicted train ratio": [
            speeds.loc["pre_ln", "train_flops_per_token"] / speeds.loc[v, "train_flops_per_token"]
            if v in speeds.index
            else None
            for v in order
        ],
    }
)
print(f"t* = {np.mean(list(t_star.values())):.1f} s (Pre-LN's total training time, mean over seeds)")
print(to_markdown(summary.round(4)))
