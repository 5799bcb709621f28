# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Diversity of Transformer Layers — Table 1: the tasks
#
# Kamigaito et al. (2025) prompt LLMs on SST-2, RTE, ARC and AG News (named by the reviewers of the
# revised version; no table of the paper is confirmed, catalog §3 "Tables"). The analogue's four
# prompt tasks stand in for them: each row is `<bos> body <ans> label-word`, read at `<ans>` against
# the task's K single-token label words. Sizes, generator seed and parameters, and the sha256 of the
# task file make each task reproducible. The ceiling is the Bayes accuracy of the test rows (below 1
# where labels are noisy by design); the cue level is what a reader of the task's lexical artifact
# alone reaches (ENTAIL's cue words, MC's far options; empty where a task has none), the level a model
# that has not learnt the rule behind the label sits at.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "layer_diversity", "table01", "smoke"  # set by the runner
inputs = ["results/layer_diversity/data/table01_tasks.csv"]

# %%
import pandas as pd

from repro.pipeline.tables import save_table

tasks = pd.read_csv(inputs[0])
table = pd.DataFrame(
    {
        "task": tasks["task"],
        "stands for (paper's dataset)": tasks["stands_for"],
        "K labels": tasks["labels"],
        "label words": tasks["label_words"],
        "train examples": tasks["train_examples"],
        "test examples": tasks["test_examples"],
        "examples per class (train; test)": tasks["train_min_class"].astype(str)
        + "–"
        + tasks["train_max_class"].astype(str)
        + "; "
        + tasks["test_min_class"].astype(str)
        + "–"
        + tasks["test_max_class"].astype(str),
        "ceiling (Bayes accuracy)": tasks["ceiling"].round(3),
        "cue level": tasks["cue_level"].round(3),
        "max tokens": tasks["max_tokens"],
        "template": tasks["template"],
        "generator seed": tasks["generator_seed"],
        "generator parameters": tasks["params"],
        "sha256 (first 16)": tasks["sha256"].str[:16],
    }
)
note = "No table of the paper is confirmed; this is the catalog's probable dataset table (T1)."
save_table(table, results_dir, paper, item, scale, note=note)
table
