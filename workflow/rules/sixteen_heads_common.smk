# Helpers of workflow/rules/sixteen_heads.smk (Snakemake lint wants functions and rules apart).
SH = "sixteen_heads"
SH_DIR = f"{RESULTS}/{SH}"
SH_CFG = config[SH]
# The two main models of the paper: BERT on MNLI (here nli) and the WMT Transformer (here mt).
# Every figure and table of slice 1 reads their runs.
SH_MAIN_TASKS = [task for task in ("nli", "mt") if task in SH_CFG["tasks"]]


def sh_size_args(wildcards):
    sizes = SH_CFG["tasks"][wildcards.task]["sizes"]
    return " ".join(f"--size {split}={n}" for split, n in sizes.items())


def sh_param_args(wildcards):
    params = SH_CFG["tasks"][wildcards.task]["params"]
    return " ".join(shlex.quote(f"--param={key}={json.dumps(value)}") for key, value in params.items())


def sh_train_spec(wildcards):
    """The JSON spec of one training run: the family's settings plus the task's steps and the seed."""
    task = SH_CFG["tasks"][wildcards.task]
    family = SH_CFG["families"][task["family"]]
    spec = {
        "family": task["family"],
        "model": family["model"],
        "train": dict(family["train"], steps=task["steps"], seed=int(wildcards.seed)),
        "label_smoothing": family.get("label_smoothing", 0.0),
    }
    return json.dumps(spec, sort_keys=True)


def sh_analysis_spec(wildcards):
    """The JSON spec of an analysis of one run."""
    task = SH_CFG["tasks"][wildcards.task]
    spec = {
        "task": wildcards.task,
        "seed": int(wildcards.seed),
        "data_seed": SH_CFG["data_seed"],
        "selection": task["selection"],
        "analysis": SH_CFG["analysis"],
        "label_smoothing": SH_CFG["families"][task["family"]].get("label_smoothing", 0.0),
    }
    return json.dumps(spec, sort_keys=True)


def sh_run_files(task, what):
    """Per-run CSVs of every seed of ``task``: what is ablation, importance or pruning."""
    return [f"{SH_DIR}/data/runs/{task}_seed{seed}_{what}.csv" for seed in seeds(SH)]


def sh_gather_inputs(wildcards):
    return [path for task in SH_MAIN_TASKS for what in ("ablation", "importance", "pruning")
            for path in sh_run_files(task, what)]


def sh_run_dir(wildcards, input):
    return os.path.dirname(input.model)
