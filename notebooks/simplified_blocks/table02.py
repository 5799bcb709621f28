# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Simplifying Transformer Blocks — Table 2: per-task GLUE scores
#
# He & Hofmann (ICLR 2024), Table 2: GLUE scores of crammed BERT per task (mean of 3 fine-tuning
# seeds) for Pre-LN, Parallel, SAS, SAS-P and V-SkipInit; MNLI is matched/mismatched accuracy,
# STS-B Spearman, CoLA Matthews correlation. The GLUE column is the mean of the 9 columns. SAS-P
# without norm is missing: fine-tuning gave NaNs.
#
# Here: the GLUE stand-in (repro.data.glue_standin): eight tasks built from lines of the code
# corpus with the same input kinds and metrics, fine-tuned from each block's masked-LM encoder
# (pre-training seed 0) with several fine-tuning seeds. Scores ×100, mean over fine-tuning seeds;
# `glue_sd` is the spread of the per-seed GLUE averages. Runs that diverged are counted and their
# scores left empty. The paper's numbers sit in `paper_*` columns; they are real GLUE, ours are
# the stand-in, so only the pattern across blocks is comparable.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "simplified_blocks", "table02", "smoke"  # set by the runner
inputs = ["results/simplified_blocks/data/glue_scores.csv", "results/simplified_blocks/data/glue_average.csv"]

# %%
import pandas as pd

from repro.papers.simplified_blocks.claims.masked_lm import chance_level
from repro.pipeline.plotting import label
from repro.pipeline.tables import save_table, to_markdown

scores = pd.read_csv(inputs[0])
average = pd.read_csv(inputs[1]).set_index("variant")
columns = ["mnli_m", "mnli_mm", "sst2", "stsb", "rte", "qnli", "qqp", "mrpc", "cola"]
columns = [c for c in columns if c in set(scores["column"])]
order = [v for v in ["pre_ln", "parallel", "sas", "sas_p", "vskipinit", "sas_p_nonorm"] if v in set(scores["variant"])]
PAPER = {  # Table 2 (GLUE average also in Table 1)
    "pre_ln": [78.9, 81.2, 81.6, 89.9, 87.6, 56.3, 88.9, 87.1, 88.3, 49.4],
    "parallel": [78.5, 80.8, 80.9, 91.0, 87.5, 54.9, 88.0, 87.0, 87.3, 49.0],
    "sas": [78.4, 79.7, 80.1, 90.3, 84.7, 58.4, 87.5, 86.8, 87.5, 50.6],
    "sas_p": [78.3, 79.5, 79.4, 90.8, 85.2, 59.1, 87.5, 86.5, 86.0, 50.5],
    "vskipinit": [78.0, 79.7, 80.4, 90.4, 85.1, 54.4, 87.0, 86.2, 87.9, 51.5],
}
PAPER_COLUMNS = ["glue", "mnli_m", "mnli_mm", "sst2", "stsb", "rte", "qnli", "qqp", "mrpc", "cola"]

# %%
means = scores.groupby(["variant", "column"])["score"].mean().unstack("column")
diverged = scores.drop_duplicates(["variant", "task", "seed"]).groupby("variant")["diverged"].sum()
rows = []
for v in order:
    row = {
        "block": label(v),
        "variant": v,
        "glue": average.loc[v, "glue_mean"],
        "glue_sd": average.loc[v, "glue_sd"],
        "finite_seeds": int(average.loc[v, "finite_seeds"]),
        "diverged_runs": int(diverged.get(v, 0)),
    }
    row.update({c: means.loc[v, c] for c in columns})
    paper_row = PAPER.get(v)
    row.update({f"paper_{c}": (paper_row[i] if paper_row else None) for i, c in enumerate(PAPER_COLUMNS)})
    rows.append(row)
table = pd.DataFrame(rows)
metrics = scores.drop_duplicates("column").set_index("column")["metric"]
chance = chance_level(scores)
note = (
    "Scores ×100 on the GLUE stand-in (code-corpus lines), mean over fine-tuning seeds; metrics: "
    + ", ".join(f"{c} {metrics[c]}" for c in columns)
    + f". A chance-level predictor averages ≈{chance:.1f}. paper_* columns are the paper's real-GLUE values (Table 2)."
)
save_table(table, results_dir, paper, item, scale, note=note)
print(to_markdown(table[["block", "glue", "glue_sd", "diverged_runs", *columns]].round(2)))
print(f"chance-level GLUE average on the stand-in: {chance:.1f}")
