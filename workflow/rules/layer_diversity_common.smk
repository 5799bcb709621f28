# Helpers of workflow/rules/layer_diversity.smk (Snakemake lint wants functions and rules apart).
from repro.papers.layer_diversity.specs import family_run_spec, hub_data_spec

LD = "layer_diversity"
LD_DIR = f"{RESULTS}/{LD}"
LD_CFG = config[LD]
LD_TASKS = list(LD_CFG["data"]["tasks"])
LD_FAMILIES = list(LD_CFG["families"])
LD_DATA = f"{LD_DIR}/data/tasks"
# data.source hub (paper scale): the tasks come from the hub datasets, tokenised per family into
# LD_DATA/<family>/, and the "train" step converts the family's frozen pretrained checkpoints.
LD_HUB = LD_CFG["data"]["source"] == "hub"
# Memory (MB) of a convert / readout job: a 7-8B checkpoint is held in float32 (converted) and read
# in float64 at paper scale; the synthetic models are tiny.
LD_TRAIN_MEM_MB = 96000 if LD_HUB else 2000
LD_READOUT_MEM_MB = 128000 if LD_HUB else 3000
# --device of the readout.
LD_ANALYSIS_DEVICE = LD_CFG["analysis_device"]
# Per-figure CSVs written by the collect step (every figure's plotted numbers, auditable alone).
LD_COLLECTED = [
    "table01_tasks",
    "table02_models",
    "fig02_reconstruction",
    "fig03_units",
    "fig03_correlations",
    "fig04_members",
    "fig04_groups",
    "fig05_prefixes",
    "fig05_examples",
    "fig06_depth",
    "fig06_fits",
    "fig06_real_layers",
    "fig07_information",
    "fig07_gains",
    "fig07_duplication",
    "table03_summary",
]
LD_READOUT_TABLES = ["units", "members", "groups", "info", "examples", "checks", "models", "duplicates"]
LD_TOY = LD_CFG["analysis"]["toy"]
LD_SUBMODULARITY = LD_CFG["analysis"]["submodularity"]


def ld_train_spec(wildcards):
    return json.dumps(family_run_spec(config, LD, wildcards.family, wildcards.seed), sort_keys=True)


def ld_family_runs(wildcards):
    """Final weights of every depth of one family and seed."""
    return [
        f"{LD_DIR}/runs/{wildcards.family}/L{depth}/seed{wildcards.seed}/model.safetensors"
        for depth in LD_CFG["depths"]
    ]


def ld_readout_dirs():
    return [f"{LD_DIR}/data/readout/{family}_seed{seed}" for family in LD_FAMILIES for seed in seeds(LD)]


def ld_runs_root(wildcards):
    """RESULTS/layer_diversity/runs: runs go to <root>/<family>/L<depth>/seed<seed>."""
    return f"{LD_DIR}/runs"


def ld_model_dirs(wildcards, input):
    return " ".join(os.path.dirname(path) for path in input.models)


def ld_readout_inputs(wildcards, input):
    return " ".join(os.path.dirname(path) for path in input.readouts)


def ld_data_dir(wildcards, input):
    return os.path.dirname(input.data[0])


def ld_stands_for():
    return json.dumps({task: entry["stands_for"] for task, entry in LD_CFG["data"]["tasks"].items()}, sort_keys=True)


def ld_train_sizes():
    return json.dumps({task: entry["train_size"] for task, entry in LD_CFG["data"]["tasks"].items()}, sort_keys=True)


def ld_data_params():
    return json.dumps({task: entry["params"] for task, entry in LD_CFG["data"]["tasks"].items()}, sort_keys=True)


def ld_csv(name):
    return f"{LD_DIR}/data/{name}.csv"


def ld_task_dir(family):
    """Where one family's task files live: its own directory with hub data (its own tokenizer)."""
    return f"{LD_DATA}/{family}" if LD_HUB else LD_DATA


def ld_task_files(wildcards):
    """The task files a (family, seed) job reads."""
    return [f"{ld_task_dir(wildcards.family)}/{task}.npz" for task in LD_TASKS]


def ld_collect_task_files():
    """The task files behind Table 1: the shared files, or with hub data the first family's."""
    return [f"{ld_task_dir(LD_FAMILIES[0])}/{task}.npz" for task in LD_TASKS]


def ld_hub_tokenizer(wildcards):
    return hub_data_spec(config, LD, wildcards.family)["tokenizer"]


def ld_hub_ids():
    return json.dumps({task: entry["hub"] for task, entry in LD_CFG["data"]["tasks"].items()}, sort_keys=True)
