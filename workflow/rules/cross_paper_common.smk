# Helpers of the cross_paper rules (functions and names only; the rules are in cross_paper.smk).
from repro.papers.cross_paper import specs as cp_specs

CP = "cross_paper"
CP_CFG = config[CP]
CP_DIR = f"{RESULTS}/{CP}"
CP_BLOCKS = f"{CP_DIR}/blocks"
CP_BLOCK_FILES = ["heads.csv", "prune.csv", "members.csv", "decomposition.csv"]
CP_BLOCK_TABLES = ["block_heads.csv", "block_prune.csv", "block_members.csv", "block_decomposition.csv"]
# The evaluation of every decoder studies 1-2 read, one directory each.
CP_BLOCK_RUNS = [f"{CP_BLOCKS}/{variant}/seed{seed}" for variant, seed in cp_specs.block_runs(config)]


def cp_decoder(wildcards):
    """The simplified_blocks run a block evaluation reads, and the valid split it was evaluated on."""
    run = f"{SB_RUNS}/{wildcards.variant}/seed{wildcards.seed}"
    return {
        "model": f"{run}/model.safetensors",
        "heldout": f"{run}/heldout.json",
        "valid": sb_token_file("valid"),
    }
