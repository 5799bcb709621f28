# Helpers of workflow/rules/sixteen_heads.smk (Snakemake lint wants functions and rules apart).
SH = "sixteen_heads"
SH_DIR = f"{RESULTS}/{SH}"
SH_CFG = config[SH]
# The two main models of the paper: BERT on MNLI (here nli) and the WMT Transformer (here mt).
# Every figure and table of slice 1 reads their runs.
SH_MAIN_TASKS = [task for task in ("nli", "mt") if task in SH_CFG["tasks"]]
# Every other task (Fig. 6: sst2, cola, mrpc, iwslt) gets an importance pruning curve only,
# trained with extra_seeds; the during_training task also keeps snapshots (Fig. 5).
SH_EXTRA_TASKS = [task for task in SH_CFG["tasks"] if task not in SH_MAIN_TASKS]
SH_EPOCH_TASK = SH_CFG["during_training"]["task"]
SH_SPEED = SH_CFG["speed"]
# data_source hub (paper scale): the task files come from the paper's own datasets, tokenised by each
# family's pretrained tokenizer, into their own directory; the classifiers are fine-tuned from the
# converted pretrained checkpoint of hub.pretrained.cls. synthetic (the default): the generators.
SH_HUB = SH_CFG["data_source"] == "hub"
SH_TASK_DIR = f"{SH_DIR}/data/{'hub_tasks' if SH_HUB else 'tasks'}"
SH_PRETRAINED_DIR = f"{SH_DIR}/pretrained"
# The device of ablate, prune, epochs and speed (--device).
SH_ANALYSIS_DEVICE = SH_CFG["analysis_device"]


def sh_task_file(wildcards):
    return f"{SH_TASK_DIR}/{wildcards.task}.npz"


def sh_family(task):
    return SH_CFG["tasks"][task]["family"]


def sh_pretrained(task):
    """The pretrained checkpoint the task's runs start from (hub data only), None: from scratch."""
    return SH_CFG["hub"]["pretrained"].get(sh_family(task)) if SH_HUB else None


def sh_init_input(wildcards):
    """The converted checkpoint a run is fine-tuned from, or nothing (trained from scratch)."""
    pretrained = sh_pretrained(wildcards.task)
    return f"{SH_PRETRAINED_DIR}/{sh_family(wildcards.task)}/model.safetensors" if pretrained else []


def sh_init_arg(wildcards, input):
    return f"--init-from {os.path.dirname(input.init)}" if input.init else ""


def sh_hub_tokenizer(wildcards):
    return SH_CFG["hub"]["tokenizers"][sh_family(wildcards.task)]


def sh_hub_max_len(wildcards):
    return SH_CFG["hub"]["max_len"][sh_family(wildcards.task)]


def sh_hub_options(wildcards):
    """`--final-sep` for the classifiers (BERT's inputs end in [SEP]) and `--mirror DIR` when set."""
    options = ["--final-sep"] if sh_family(wildcards.task) == "cls" else []
    mirror = SH_CFG["hub"]["mirror"]
    if mirror:
        options.append(f"--mirror {shlex.quote(str(mirror))}")
    return " ".join(options)


def sh_pretrained_checkpoint(wildcards):
    return SH_CFG["hub"]["pretrained"][wildcards.family]


def sh_seeds(task):
    return seeds(SH) if task in SH_MAIN_TASKS else SH_CFG["extra_seeds"]


def sh_epoch_steps(task):
    """{epoch: update after which its snapshot is kept}; an epoch is round(train size / batch size) updates."""
    settings = SH_CFG["tasks"][task]
    batch = SH_CFG["families"][settings["family"]]["train"]["batch_size"]
    per_epoch = settings["sizes"]["train"] / batch
    return {int(epoch): max(1, round(epoch * per_epoch)) for epoch in SH_CFG["during_training"]["epochs"]}


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
    if wildcards.task == SH_EPOCH_TASK:  # Fig. 5 reads the snapshots of these updates
        spec["train"]["keep_checkpoints_at"] = sorted(set(sh_epoch_steps(wildcards.task).values()))
    if sh_pretrained(wildcards.task):  # only then: synthetic runs keep their spec (and identity)
        spec["init_from"] = sh_pretrained(wildcards.task)
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
        "main": wildcards.task in SH_MAIN_TASKS,
    }
    if wildcards.task == SH_EPOCH_TASK:
        spec["epochs"] = {str(epoch): step for epoch, step in sh_epoch_steps(wildcards.task).items()}
    return json.dumps(spec, sort_keys=True)


def sh_speed_spec(wildcards):
    return json.dumps(
        {key: SH_SPEED[key] for key in ("seed", "prune_percent", "batch_sizes", "examples", "rounds", "warmup")},
        sort_keys=True,
    )


def sh_run_files(task, what):
    """Per-run CSVs of every seed of ``task``: what is ablation, importance, pruning or epochs."""
    return [f"{SH_DIR}/data/runs/{task}_seed{seed}_{what}.csv" for seed in sh_seeds(task)]


def sh_gather_inputs(wildcards):
    main = [
        path
        for task in SH_MAIN_TASKS
        for what in ("ablation", "importance", "pruning")
        for path in sh_run_files(task, what)
    ]
    extra = [path for task in SH_EXTRA_TASKS for what in ("importance", "pruning") for path in sh_run_files(task, what)]
    return main + extra + sh_run_files(SH_EPOCH_TASK, "epochs")


def sh_ablation_input(wildcards):
    """The ablation CSV of a main-task run (for the oracle order); none for the other tasks."""
    if wildcards.task in SH_MAIN_TASKS:
        return f"{SH_DIR}/data/runs/{wildcards.task}_seed{wildcards.seed}_ablation.csv"
    return []


def sh_ablation_arg(wildcards, input):
    return f"--ablation {input.ablation}" if input.ablation else ""


def sh_run_dir(wildcards, input):
    return os.path.dirname(input.model)
