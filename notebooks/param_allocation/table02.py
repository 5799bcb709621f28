# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Table 2 (pipeline analogue): checks and verdicts
#
# The catalog proposes a table of the machine checks with their measured values and verdicts. It is
# the paper's rows of the scorecard (results/param_allocation/claims.csv), with the tolerance each
# check fixed before any run. At smoke scale every verdict reads "not measurable at this scale".

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "table02", "smoke"  # set by the runner
inputs = ["results/param_allocation/claims.csv"]

# %%
import pandas as pd

from repro.pipeline.tables import save_table

claims = pd.read_csv(inputs[0], dtype=str).fillna("")
table = claims[["item", "claim", "paper_value", "measured", "tolerance", "verdict", "seeds"]].copy()
table["claim"] = table["claim"].str.split(":").str[0]
note = "A pipeline record (catalog §2, Tables), not a table of the paper."
save_table(table, results_dir, paper, item, scale, note=note)
