# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Table 2: the models
#
# The paper analyses pretrained LLMs of the Llama, Mistral and Phi families (Llama-3-8B is named;
# other sizes are unknown). The analogue trains three small families that share their defining
# block design: GPT-like (LayerNorm, GELU, sequential), Llama-like (RMSNorm, SwiGLU, RoPE) and
# Phi-like (parallel attention and MLP). Parameter counts are exact: `parameters` is PyTorch's count
# (tied weights once), `closed form` is the formula of `repro.analysis.parameter_count`; they must agree.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "table02", "smoke"  # set by the runner
stands_for = {}
inputs = ["results/layer_diversity/data/table02_models.csv"]

# %%
import pandas as pd

from repro.pipeline.tables import save_table

models = pd.read_csv(inputs[0])
per_model = (
    models.groupby(["family", "depth"], sort=False)
    .agg(
        seeds=("seed", "nunique"),
        d_model=("d_model", "first"),
        n_heads=("n_heads", "first"),
        d_ff=("d_ff", "first"),
        norm=("norm", "first"),
        activation=("activation", "first"),
        block=("block", "first"),
        position=("position", "first"),
        tied=("tied_embeddings", "first"),
        parameters=("parameters", "first"),
        parameters_max=("parameters", "max"),
        formula=("parameters_formula", "first"),
    )
    .reset_index()
)
assert (per_model["parameters"] == per_model["parameters_max"]).all(), "seeds of one model differ in size"
table = pd.DataFrame(
    {
        "family": per_model["family"],
        "stands for": per_model["family"].map(stands_for).fillna(""),
        "layers": per_model["depth"],
        "d_model": per_model["d_model"],
        "heads": per_model["n_heads"],
        "d_ff": per_model["d_ff"],
        "block": per_model["block"],
        "norm": per_model["norm"],
        "activation": per_model["activation"],
        "position": per_model["position"],
        "tied unembedding": per_model["tied"],
        "members M = 2L+1": 2 * per_model["depth"] + 1,
        "parameters": per_model["parameters"],
        "closed form": per_model["formula"],
        "seeds": per_model["seeds"],
    }
)
note = "No table of the paper is confirmed; this is the catalog's probable model table (T2)."
save_table(table, results_dir, paper, item, scale, note=note)
table
