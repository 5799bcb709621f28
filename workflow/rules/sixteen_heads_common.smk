# Helpers of workflow/rules/sixteen_heads.smk (Snakemake lint wants functions and rules apart).
from repro.papers.sixteen_heads import specs as sh_specs

SH = "sixteen_heads"
SH_DIR = f"{RESULTS}/{SH}"
SH_CFG = config[SH]
# The main tasks (nli, mt) and the others (Fig. 6); see repro.papers.sixteen_heads.specs.
SH_MAIN_TASKS = sh_specs.main_tasks(SH_CFG)
SH_EXTRA_TASKS = sh_specs.extra_tasks(SH_CFG)
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
    return sh_specs.pretrained(SH_CFG, task)


def sh_init_input(wildcards):
    """The body a run is fine-tuned from: the converted hub checkpoint, the masked-LM body pre-trained
    on the task's inputs (pretrain.tasks), or nothing (trained from scratch)."""
    if sh_pretrained(wildcards.task):
        return f"{SH_PRETRAINED_DIR}/{sh_family(wildcards.task)}/model.safetensors"
    if sh_specs.pretrained_here(SH_CFG, wildcards.task):
        return f"{SH_PRETRAINED_DIR}/mlm_{wildcards.task}/model.safetensors"
    return []


def sh_pretrain_spec(wildcards):
    return json.dumps(sh_specs.pretrain_spec(SH_CFG, wildcards.task), sort_keys=True)


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
    return sh_specs.task_seeds(SH_CFG, task)


def sh_size_args(wildcards):
    sizes = SH_CFG["tasks"][wildcards.task]["sizes"]
    return " ".join(f"--size {split}={n}" for split, n in sizes.items())


def sh_param_args(wildcards):
    params = SH_CFG["tasks"][wildcards.task]["params"]
    return " ".join(shlex.quote(f"--param={key}={json.dumps(value)}") for key, value in params.items())


def sh_train_spec(wildcards):
    return json.dumps(sh_specs.train_spec(SH_CFG, wildcards.task, wildcards.seed), sort_keys=True)


def sh_analysis_spec(wildcards):
    return json.dumps(sh_specs.analysis_spec(SH_CFG, wildcards.task, wildcards.seed), sort_keys=True)


def sh_speed_spec(wildcards):
    return json.dumps(sh_specs.speed_spec(SH_CFG), sort_keys=True)


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


def sh_gather_groups(wildcards, input, output):
    """One `--group OUT IN ...` per kind of per-run CSV (<task>_seed<k>_<kind>.csv), inputs in rule order."""
    kinds = ("ablation", "importance", "pruning", "epochs")
    return gather_groups((output[kind], [p for p in input if p.endswith(f"_{kind}.csv")]) for kind in kinds)


def sh_ablation_input(wildcards):
    """The ablation CSV of a main-task run (for the oracle order); none for the other tasks."""
    if wildcards.task in SH_MAIN_TASKS:
        return f"{SH_DIR}/data/runs/{wildcards.task}_seed{wildcards.seed}_ablation.csv"
    return []


def sh_ablation_arg(wildcards, input):
    return f"--ablation {input.ablation}" if input.ablation else ""
