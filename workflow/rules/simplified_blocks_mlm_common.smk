# Helpers of the masked-LM rules of simplified_blocks (functions only; rules in simplified_blocks_mlm.smk).
import json

from repro.papers.simplified_blocks.specs import mlm_run_spec, mlm_trained_variants

MLM_CFG = SB_CFG["mlm"]
MLM_DATA = f"{RESULTS}/{SB}/mlm_data"
MLM_RUNS = f"{RESULTS}/{SB}/mlm_runs"
# mlm.data.source hub (paper scale): pre-training text and GLUE from the hub, encoded by a hub
# WordPiece tokenizer (MLM_HUB_DIR), instead of the code corpus's prose and the GLUE stand-in.
MLM_DATA_CFG = MLM_CFG.get("data", {"source": "offline"})
MLM_HUB = MLM_DATA_CFG["source"] == "hub"
MLM_HUB_DIR = f"{MLM_DATA}/hub"
MLM_GLUE_FILE = f"{MLM_HUB_DIR}/glue.npz" if MLM_HUB else f"{MLM_DATA}/glue_standin.npz"
# Memory (MB) of a pre-training job: at paper scale ~1B tokens are cut into int64 chunks in memory.
MLM_PRETRAIN_MEM_MB = 48000 if MLM_HUB else 3000
# A step-time table kept from an earlier run (mlm.step_times_file), used instead of timing the blocks.
MLM_KEPT_STEP_TIMES = [MLM_CFG["step_times_file"]] if MLM_CFG.get("step_times_file") else []
# GLUE fine-tuning runs on the device of pre-training (mlm.train.device; absent means cpu).
MLM_FINETUNE_DEVICE = MLM_CFG["train"].get("device", "cpu")


def mlm_spec_json(wildcards):
    """The JSON spec of one masked-LM pre-training run."""
    return json.dumps(mlm_run_spec(MLM_CFG, wildcards.variant, int(wildcards.seed)), sort_keys=True)


# The blocks pre-trained and fine-tuned (mlm.trained_variants); every block of mlm.variants is timed.
MLM_TRAINED = mlm_trained_variants(MLM_CFG)


def mlm_all_runs(wildcards):
    """Final weights of every (trained block, seed) pre-training run (Figs 7, 27)."""
    return [f"{MLM_RUNS}/{v}/seed{s}/model.safetensors" for v in MLM_TRAINED for s in MLM_CFG["seeds"]]


def mlm_shard_variants(shard):
    """The blocks fine-tuned by job `shard` (round-robin over finetune_jobs jobs)."""
    return MLM_TRAINED[int(shard) :: MLM_CFG["finetune_jobs"]]


def mlm_finetuned_runs(wildcards):
    """The pre-training runs (seed finetune_pretrain_seed) that one fine-tuning job starts from."""
    seed = MLM_CFG["finetune_pretrain_seed"]
    return [f"{MLM_RUNS}/{v}/seed{seed}/model.safetensors" for v in mlm_shard_variants(wildcards.shard)]


def mlm_finetune_csvs(wildcards):
    return [f"{SB_DATA}/mlm_finetune/part{k}.csv" for k in range(MLM_CFG["finetune_jobs"])]


def mlm_glue_json(wildcards):
    return json.dumps(MLM_CFG["glue"], sort_keys=True)


def mlm_finetune_json(wildcards):
    return json.dumps(MLM_CFG["finetune"], sort_keys=True)


def mlm_finetune_seeds(wildcards):
    return " ".join(str(s) for s in MLM_CFG["finetune_seeds"])


def mlm_variant_pattern():
    return "|".join(MLM_TRAINED)


def mlm_token_file(split):
    """The pre-training token file of one split (train, valid)."""
    return f"{MLM_HUB_DIR}/text/{split}.npz" if MLM_HUB else f"{MLM_DATA}/prose/tokens/{split}.npz"


def mlm_glue_limit_option():
    limit = MLM_DATA_CFG.get("glue_train_limit")
    return f"--train-limit {int(limit)}" if limit else ""


def mlm_step_times_tokens(wildcards):
    """The step timing needs no data, only the vocabulary: the tokenizer's configured size offline;
    a hub tokenizer's is read from its token file (and the job then waits for it)."""
    return [mlm_token_file("train")] if MLM_HUB else []


def mlm_step_times_vocabulary(wildcards, input):
    return f"--tokens {input.tokens[0]}" if MLM_HUB else f"--vocab-size {config['tokenizer']['vocab_size']}"


def mlm_reuse_option(wildcards, input):
    return f"--reuse {shlex.quote(input.kept[0])}" if input.kept else ""


def mlm_step_times_specs(wildcards):
    """One run spec per block (the first seed; the seed does not change the cost of an update)."""
    seed = MLM_CFG["seeds"][0]
    return json.dumps([mlm_run_spec(MLM_CFG, v, seed) for v in MLM_CFG["variants"]], sort_keys=True)
