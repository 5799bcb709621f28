# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Allocation of Parameters — Table 1 (pipeline analogue): run configurations
#
# No table of the paper is described by any available source; the catalog proposes a table of every
# run configuration (sizes, budget D, parameter counts, training settings, wall time) as the
# pipeline's own record. It is not a reproduction of a paper table. Parameter counts and seconds
# are read from the runs (tidy CSVs), the training settings from the configuration: the synthetic
# sweeps, the saturation students, the teacher decoders, their student heads and the Fig 5 decoders.

# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "param_allocation", "table01", "smoke"  # set by the runner
inputs = [
    "results/param_allocation/data/heads_sweep.csv",
    "results/param_allocation/data/saturation_trained.csv",
    "results/param_allocation/data/replacement.csv",
    "results/param_allocation/data/decoders.csv",
]
config = {}

# %%
import pandas as pd

from repro.pipeline.tables import save_table

sweep = pd.read_csv(inputs[0])
saturation = pd.read_csv(inputs[1])
replacement = pd.read_csv(inputs[2])
decoders = pd.read_csv(inputs[3])
sweep_cfg, saturation_cfg = config.get("sweep", {}), config.get("saturation", {})
lm_cfg, replacement_cfg, decoders_cfg = config.get("lm", {}), config.get("replacement", {}), config.get("decoders", {})
sweep_train, saturation_train = sweep_cfg.get("train", {}), saturation_cfg.get("train", {})

# %%
rows = []
for (task, position), part in sweep.groupby(["task", "position"]):
    rows.append(
        {
            "experiment": "heads sweep",
            "task": task,
            "position": position,
            "sizes": f"D = {int(part['budget'].iloc[0])}, H ∈ {{{', '.join(map(str, sorted(part['heads'].unique())))}}}, "
            f"d_model = {sweep_cfg.get('d_model', '?')}, d_ff = {sweep_cfg.get('d_ff', '?')}, T = {sweep_cfg.get('seq_len', '?')}",
            "parameters": f"{part['n_parameters'].min():,}–{part['n_parameters'].max():,}",
            "attention_parameters": f"{part['attention_parameters'].min():,}–{part['attention_parameters'].max():,}",
            "steps": int(part["steps"].max()),
            "batch": sweep_train.get("batch_size"),
            "lr": sweep_train.get("lr"),
            "seeds": int(part["seed"].nunique()),
            "runs": len(part),
            "train_seconds_per_run": float(part["train_seconds"].mean()),
        }
    )
for rank, part in saturation.groupby("rank"):
    rows.append(
        {
            "experiment": "saturation students",
            "task": "teacher head",
            "position": "none (key sets)",
            "sizes": f"d = {saturation_cfg.get('dim', '?')}, r = {rank}, L ∈ {{{', '.join(map(str, sorted(part['length'].unique())))}}}",
            "parameters": f"{2 * saturation_cfg.get('dim', 0) * rank:,}",
            "attention_parameters": f"{2 * saturation_cfg.get('dim', 0) * rank:,}",
            "steps": int(part["steps"].max()),
            "batch": saturation_train.get("batch_size"),
            "lr": saturation_train.get("lr"),
            "seeds": int(part["seed"].nunique()),
            "runs": len(part),
            "train_seconds_per_run": float(part["train_seconds"].mean()),
        }
    )
lm_model, lm_train = lm_cfg.get("model", {}), lm_cfg.get("train", {})
teachers = replacement[replacement["condition"] == "teacher"]
rows.append(
    {
        "experiment": "teacher decoders (Figs 4, 6, 9, 10)",
        "task": "code corpus, next token",
        "position": lm_model.get("position", "?"),
        "sizes": f"{lm_model.get('n_layers', '?')} layers, d_model = {lm_model.get('d_model', '?')}, "
        f"{lm_model.get('n_heads', '?')} heads × {int(teachers['head_dim'].iloc[0])}, T = {lm_model.get('max_seq_len', '?')}",
        "parameters": f"{int(teachers['model_parameters'].iloc[0]):,}",
        "attention_parameters": f"{4 * lm_model.get('n_layers', 0) * lm_model.get('d_model', 0) ** 2:,}",
        "steps": int(teachers["steps"].max()),
        "batch": lm_train.get("batch_size"),
        "lr": lm_train.get("lr"),
        "seeds": int(teachers["seed"].nunique()),
        "runs": len(teachers),
        "train_seconds_per_run": float(teachers["train_seconds"].mean()),
    }
)
students = replacement[(replacement["condition"] == "student") & (replacement["stage"] == "finetuned")]
for init, part in students.groupby("init"):
    rows.append(
        {
            "experiment": f"student heads, {init} init (Figs 4, 6, 9)",
            "task": "MSE to the teacher head's output",
            "position": "as the teacher",
            "sizes": f"layers {{{', '.join(str(int(layer)) for layer in sorted(part['layer'].unique()))}}}, r ∈ {{{', '.join(map(str, sorted(part['rank'].unique())))}}}",
            "parameters": f"{part['student_parameters'].min():,}–{part['student_parameters'].max():,}",
            "attention_parameters": f"{part['student_parameters'].min():,}–{part['student_parameters'].max():,}",
            "steps": int(part["steps"].max()),
            "batch": replacement_cfg.get("train", {}).get("batch_size"),
            "lr": replacement_cfg.get("train", {}).get("lr"),
            "seeds": int(part["seed"].nunique()),
            "runs": len(part),
            "train_seconds_per_run": float(part["train_seconds"].mean()),
        }
    )
for length, part in decoders.groupby("length"):
    rows.append(
        {
            "experiment": "decoders across head dims (Fig 5)",
            "task": "code corpus, next token",
            "position": decoders_cfg.get("model", {}).get("position", "?"),
            "sizes": f"{int(part['n_layers'].iloc[0])} layers, d_model = {int(part['d_model'].iloc[0])}, "
            f"{int(part['heads'].iloc[0])} heads, d_h ∈ {{{', '.join(map(str, sorted(part['head_dim'].unique())))}}}, T = {length}",
            "parameters": f"{part['parameters'].min():,}–{part['parameters'].max():,}",
            "attention_parameters": f"{part['attention_parameters'].min():,}–{part['attention_parameters'].max():,}",
            "steps": int(part["steps"].max()),
            "batch": int(part["batch_size"].iloc[0]),
            "lr": decoders_cfg.get("train", {}).get("lr"),
            "seeds": int(part["seed"].nunique()),
            "runs": len(part),
            "train_seconds_per_run": float(part["train_seconds"].mean()),
        }
    )
table = pd.DataFrame(rows)
note = "A pipeline record (catalog §2, Tables), not a table of the paper: no paper table is known."
save_table(table, results_dir, paper, item, scale, note=note)
