# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Are Sixteen Heads Really Better than One? — Table 4: inference speed after pruning half the heads
#
# Michel et al. (2019), §4.3, Table 4: BERT on MNLI-matched dev, examples per second at batch sizes
# 1, 4, 16 and 64 (mean ± std of 6 runs on GTX 1080Ti GPUs), before and after physically removing
# 50% of the heads. The speedup is up to 17.5% at large batches and vanishes at batch 1.
#
# Here: the CLS model (MNLI analogue) of one seed, before and after removing the 50% of heads with
# the lowest layer-normalised importance (W^Q, W^K, W^V rows and W^O columns sliced out; W^O's bias
# kept), timed on CPU with the rule's threads in interleaved rounds (one forward pass per batch under
# no_grad, eval mode, over a fixed set of test examples). Columns: median examples/s over rounds,
# mean ± sd, and the speedup of the medians.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "sixteen_heads", "table04", "smoke"  # set by the runner
alpha = 0.01
inputs = ["results/sixteen_heads/data/speed.csv", "results/sixteen_heads/data/speed_models.csv"]

# %%
import pandas as pd

from repro.papers.sixteen_heads.pruned_speed import summarize_speed
from repro.pipeline.tables import save_table, to_markdown

PAPER = {  # Table 4 of the paper: examples/s, mean ± std
    1: ("17.0±0.3", "17.3±0.6 (+1.9%)"),
    4: ("67.3±1.3", "69.1±1.3 (+2.7%)"),
    16: ("114.0±3.6", "134.0±3.6 (+17.5%)"),
    64: ("124.7±2.9", "146.6±3.4 (+17.5%)"),
}
timings = pd.read_csv(inputs[0])
models = pd.read_csv(inputs[1])
summary = summarize_speed(timings, "original")

# %%
rows = []
for size, g in summary.groupby("batch_size", sort=True):
    g = g.set_index("variant")
    paper_row = PAPER.get(int(size), ("", ""))
    rows.append(
        {
            "batch size": int(size),
            "original ex/s (median)": g.loc["original", "median"],
            "original ex/s (mean ± sd)": f"{g.loc['original', 'mean']:.1f} ± {g.loc['original', 'sd']:.1f}",
            "pruned ex/s (median)": g.loc["pruned", "median"],
            "pruned ex/s (mean ± sd)": f"{g.loc['pruned', 'mean']:.1f} ± {g.loc['pruned', 'sd']:.1f}",
            "speedup (%)": 100 * (g.loc["pruned", "speedup"] - 1),
            "paper_original": paper_row[0],
            "paper_pruned": paper_row[1],
        }
    )
table = pd.DataFrame(rows)
m = models.set_index("variant")
note = (
    f"Ours: seed {int(models['seed'].iloc[0])}, {int(timings['examples'].iloc[0])} test examples of width "
    f"{int(timings['seq_len'].iloc[0])}, {int(timings['threads'].iloc[0])} threads, "
    f"{int(timings['round'].max()) + 1} interleaved rounds. Parameters {int(m.loc['original', 'parameters']):,} -> "
    f"{int(m.loc['pruned', 'parameters']):,}; Q/K/V/O weights {int(m.loc['original', 'attention_weights']):,} -> "
    f"{int(m.loc['pruned', 'attention_weights']):,}; heads per layer {m.loc['pruned', 'heads_per_layer']}. "
    f"Accuracy {100 * m.loc['original', 'accuracy']:.2f}% -> {100 * m.loc['pruned', 'accuracy']:.2f}% "
    f"(masked model {100 * m.loc['pruned', 'accuracy_masked']:.2f}%; max |logit difference| pruned vs masked "
    f"{m.loc['pruned', 'max_logit_difference']:.1e}). Paper: BERT-base on GTX 1080Ti, mean ± std of 6 runs."
)
save_table(table, results_dir, paper, item, scale, note=note)

# %% [markdown]
# The two models' parameter counts and agreement with the masked model.

# %%
print(to_markdown(models))
