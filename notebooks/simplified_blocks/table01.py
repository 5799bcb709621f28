# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Table 1: parameters and speed of the six blocks
#
# He & Hofmann (ICLR 2024), Table 1: for crammed BERT, the GLUE average (3 seeds), the parameter
# count and the speed (micro-batch steps in 24 hours relative to Pre-LN) of Pre-LN, Parallel,
# V-SkipInit, SAS, SAS-P and SAS-P without norm. SAS and SAS-P have 16% fewer parameters and are up
# to 16% faster; the text gives 167M (Pre-LN) and 146M (SAS) for the 18-layer CodeParrot models.
#
# Here: parameters counted on our models (trainable parameters, tied embeddings once) at this
# scale and at the paper's CodeParrot size, and training and inference throughput relative to
# Pre-LN, all blocks timed interleaved in one process at the training shape: the mean over rounds
# of the ratio within a round, as the speed claims judge it (absolute tokens/s: median over rounds).
# The paper's values sit in columns of their own (`paper_*`): its parameter and speed columns are
# for crammed BERT, except `paper_params_codeparrot` from the text. The GLUE column comes with the
# masked-LM fine-tuning runs.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "table01", "smoke"  # set by the runner
inputs = [
    "results/simplified_blocks/data/structure_params.csv",
    "results/simplified_blocks/data/throughput_models.csv",
    "results/simplified_blocks/data/throughput_timings.csv",
]

# %%
from pathlib import Path

import pandas as pd

from repro.pipeline.plotting import label
from repro.pipeline.tables import save_table, to_markdown

params = pd.read_csv(inputs[0])
speeds = pd.read_csv(inputs[1]).set_index("variant")
timings = pd.read_csv(inputs[2])
order = [v for v in ["pre_ln", "parallel", "vskipinit", "sas", "sas_p", "sas_p_nonorm"] if v in speeds.index]
PAPER_PARAMS_BERT = {
    "pre_ln": 120e6,
    "parallel": 120e6,
    "vskipinit": 120e6,
    "sas": 101e6,
    "sas_p": 101e6,
    "sas_p_nonorm": 101e6,
}
PAPER_PARAMS_CODEPARROT = {"pre_ln": 167e6, "sas": 146e6}
PAPER_SPEED = {"pre_ln": 1.0, "parallel": 1.05, "vskipinit": 0.95, "sas": 1.09, "sas_p": 1.16, "sas_p_nonorm": 1.20}

# %%
here = params[params["size"] == "this scale"].set_index("variant")["parameters"]
big = params[params["size"] == "paper size"].set_index("variant")["parameters"]
spread = timings[timings["mode"] == "train"].groupby("variant")["tokens_per_s"].agg(["min", "max"])
table = pd.DataFrame(
    {
        "block": [label(v) for v in order],
        "variant": order,
        "params": [int(here[v]) for v in order],
        "params_vs_pre_ln": [here[v] / here["pre_ln"] for v in order],
        "params_paper_size": [int(big[v]) for v in order],
        "paper_params_codeparrot": [PAPER_PARAMS_CODEPARROT.get(v) for v in order],
        "paper_params": [PAPER_PARAMS_BERT[v] for v in order],
        "speed_train": [speeds.loc[v, "speed_train"] for v in order],
        "speed_inference": [speeds.loc[v, "speed_inference"] for v in order],
        "paper_speed": [PAPER_SPEED[v] for v in order],
        "train_flops_per_token": [speeds.loc[v, "train_flops_per_token"] for v in order],
    }
)
medians = timings.groupby(["variant", "mode"])["tokens_per_s"].median().unstack("mode")
table["train_tokens_per_s"] = [medians.loc[v, "train"] for v in order]
table["inference_tokens_per_s"] = [medians.loc[v, "inference"] for v in order]
table["train_tokens_per_s_min"] = [spread.loc[v, "min"] for v in order]
table["train_tokens_per_s_max"] = [spread.loc[v, "max"] for v in order]
# The masked-LM part may pass its GLUE stand-in averages as an extra input (glue_average.csv, one row
# per variant): every numeric column joins the table as glue_<column>; without it there is no GLUE column.
for extra in inputs[3:]:
    if Path(extra).name == "glue_average.csv":
        glue = pd.read_csv(extra).set_index("variant")
        for column in glue.select_dtypes("number").columns:
            name = column if column.startswith("glue") else f"glue_{column}"
            table[name] = [glue[column].get(v) for v in order]
settings = speeds.iloc[0]
note = (
    f"Throughput: batch {int(settings['batch_size'])} × {int(settings['seq_len'])} tokens, {int(settings['threads'])} thread(s), "
    f"{int(settings['rounds'])} interleaved rounds of {int(settings['timed_steps'])} steps: speeds are the mean "
    "of the ratios to Pre-LN within a round, tokens/s the median over rounds. "
    "paper_params and paper_speed are the paper's crammed-BERT values (Table 1); paper_params_codeparrot is from its text."
)
save_table(table, results_dir, paper, item, scale, note=note)
print(
    to_markdown(
        table[
            [
                "block",
                "params",
                "params_vs_pre_ln",
                "params_paper_size",
                "paper_params_codeparrot",
                "speed_train",
                "speed_inference",
                "paper_speed",
            ]
            + [c for c in table.columns if c.startswith("glue")]
        ].round(4)
    )
)
