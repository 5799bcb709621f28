# Helpers of the cross_paper rules (functions and names only; the rules are in cross_paper.smk).
from repro.papers.cross_paper import specs as cp_specs

CP = "cross_paper"
CP_CFG = config[CP]
CP_DIR = f"{RESULTS}/{CP}"
CP_BLOCKS = f"{CP_DIR}/blocks"
CP_BLOCK_FILES = list(cp_specs.BLOCK_FILES)
CP_BLOCK_TABLES = list(cp_specs.BLOCK_FILES.values())
# The evaluation of every decoder studies 1-2 read, one directory each.
# Study 3: one job per seed of param_allocation's head-count sweep, and the tables they are stacked into.
CP_SWEEP = f"{CP_DIR}/sweep"
CP_SWEEP_SEEDS = config[PA]["sweep"]["seeds"]
CP_BLOCK_RUNS = [f"{CP_BLOCKS}/{variant}/seed{seed}" for variant, seed in cp_specs.block_runs(config)]


def cp_decoder(wildcards):
    """The simplified_blocks run a block evaluation reads, and the valid split it was evaluated on."""
    run = f"{SB_RUNS}/{wildcards.variant}/seed{wildcards.seed}"
    return {
        "model": f"{run}/model.safetensors",
        "heldout": f"{run}/heldout.json",
        "valid": sb_token_file("valid"),
    }


def cp_classifiers(wildcards):
    """Study 4's inputs: sixteen_heads' NLI classifiers (one run per seed), their task file and importance."""
    runs = [f"{RESULTS}/{SH}/runs/{cp_specs.SATURATION_TASK}/seed{seed}" for seed in sh_seeds(cp_specs.SATURATION_TASK)]
    return {
        "models": [f"{run}/model.safetensors" for run in runs],
        "task": cp_specs.saturation_task_file(config, RESULTS),
        "importance": f"{RESULTS}/{SH}/data/importance.csv",
    }


def cp_classifier_runs(wildcards, input):
    """The run directories of study 4's classifiers, in seed order."""
    return " ".join(os.path.dirname(path) for path in input.models)


def cp_sweep_spec(wildcards):
    """The sweep settings the models were trained with (param_allocation's sweep section), as JSON."""
    return json.dumps(config[PA]["sweep"], sort_keys=True)
