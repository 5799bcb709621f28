# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Table 3: the numbers behind Figs. 3–7
#
# No table of the paper is confirmed. The catalog expects appendix tables of the numeric values
# behind Figs. 3–7, per model and task (catalog §3, "Tables"). Each row here is one family and task
# at one depth, and each value is the mean ± sample sd over seeds.
#
# - Accuracy: the model's own accuracy, and that of the logit-lens ensemble of all its layers.
# - Bias, Diversity, MSE: logit-lens form over all layers, one-hot target.
# - Bias/M², Diversity/M²: module form, divided by M² = (2L+1)² so that depths are comparable.
# - I(U;Y) and IT diversity: information terms in bits over all layers.
# - Violations: the share of the real layers' prefix submodularity tests that fail by more than 1e-3 bits.
#
# The markdown table shows the deepest and the shallowest models. The CSV (data/table03_summary.csv)
# has every depth, with min and max.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "table03", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/table03_summary.csv"]

# %%
import pandas as pd

from repro.pipeline.tables import save_table

summary = pd.read_csv(inputs[0])
short = {
    "accuracy": "acc",
    "prefix_ensemble_accuracy": "ens. acc",
    "bias": "Bias",
    "diversity": "Div",
    "mse": "MSE",
    "module_bias_per_m2": "Bias/M² (mod.)",
    "module_diversity_per_m2": "Div/M² (mod.)",
    "joint_information": "I(U;Y) bits",
    "it_diversity": "IT div. bits",
    "submodularity_violation_share": "submod. violations",
}
shown = summary[summary["depth"].isin([summary["depth"].min(), summary["depth"].max()])].copy()


def cell(row) -> str:
    if pd.isna(row["mean"]):
        return "–"
    return f"{row['mean']:.3g}" if pd.isna(row["sd"]) else f"{row['mean']:.3g} ± {row['sd']:.2g}"


shown["value"] = shown.apply(cell, axis=1)
table = shown.pivot_table(
    index=["family", "depth", "task"], columns="quantity", values="value", aggfunc="first", sort=False
)
table = table.reindex(columns=[q for q in short if q in table.columns]).rename(columns=short).reset_index()
task_order = {t: i for i, t in enumerate(["sent", "entail", "topic", "mc"])}
table = table.sort_values(["family", "depth", "task"], key=lambda c: c.map(task_order) if c.name == "task" else c)
table = table.reset_index(drop=True)  # a sorted, shuffled index would become an "index" column
seeds = int(summary["seeds"].max())
note = (
    f"Reconstructed from the paper's description: no table of the paper is confirmed (catalog §3). "
    f"Mean ± sd over {seeds} seed(s); shallowest and deepest models (every depth in the data CSV)."
)
save_table(table, results_dir, paper, item, scale, note=note)
table
