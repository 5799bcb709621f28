# "Simplifying Transformer Blocks", masked-LM part (crammed-BERT stand-in): Figs 7, 27, Table 2
# and the GLUE column of Table 1.
#   the blocks' seconds per update, timed interleaved -> mlm_step_times.csv (Figs 7, 27, Table 1)
#   prose of the code corpus -> tokens -> one MLM run per (trained block, seed), of the updates its time
#   budget buys at its timed step -> mlm_curves.csv (Figs 7, 27)
#   code lines -> GLUE stand-in tasks -> fine-tuning of each block's seed-0 encoder, several seeds
#   -> glue_scores.csv, glue_average.csv (Table 2, Table 1's GLUE column)
#   at paper scale (mlm.data.source hub): the Pile and the real GLUE tasks from the hub instead


include: "simplified_blocks_mlm_common.smk"


rule simplified_blocks_mlm_prose:
    input:
        train=rules.code_corpus.output.train,
        valid=rules.code_corpus.output.valid,
    output:
        train=f"{MLM_DATA}/prose/train.jsonl.gz",
        valid=f"{MLM_DATA}/prose/valid.jsonl.gz",
        card=f"{MLM_DATA}/prose/card.json",
    log:
        f"{RESULTS}/logs/{SB}/mlm/prose.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/prose.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        corpus_dir=lambda wildcards, input: os.path.dirname(input.train),
        max_bytes=MLM_CFG["text_max_bytes"],
        out_dir=parent_dir,
    shell:
        "python -m repro simplified_blocks prose --corpus-dir {params.corpus_dir} --out-dir {params.out_dir} "
        "--max-bytes {params.max_bytes} > {log} 2>&1"


rule simplified_blocks_mlm_tokens:
    input:
        corpus=rules.simplified_blocks_mlm_prose.output.train,
        valid=rules.simplified_blocks_mlm_prose.output.valid,
        tokenizer=rules.code_tokenizer.output,
    output:
        train=f"{MLM_DATA}/prose/tokens/train.npz",
        valid=f"{MLM_DATA}/prose/tokens/valid.npz",
        card=f"{MLM_DATA}/prose/tokens/card.json",
    log:
        f"{RESULTS}/logs/{SB}/mlm/tokens.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/tokens.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        corpus_dir=lambda wildcards, input: os.path.dirname(input.corpus),
        out_dir=parent_dir,
    shell:
        "python -m repro data tokenize --corpus-dir {params.corpus_dir} --tokenizer {input.tokenizer} "
        "--out-dir {params.out_dir} --threads {threads} > {log} 2>&1"


# The levels a masked LM of the pre-training text must beat: the held-out split's unigram (and bigram)
# cross-entropy under counts of the train split; a masked token is drawn from the same unigram. The code
# corpus's rule, on the prose's token files.
MLM_LEVELS = f"{MLM_DATA}/reference_levels.json"


use rule code_reference_levels as simplified_blocks_mlm_reference_levels with:
    input:
        train=mlm_token_file("train"),
        valid=mlm_token_file("valid"),
    output:
        MLM_LEVELS,
    log:
        f"{RESULTS}/logs/{SB}/mlm/reference_levels.log",


rule simplified_blocks_mlm_glue_data:
    input:
        train=rules.code_corpus.output.train,
        valid=rules.code_corpus.output.valid,
        tokenizer=rules.code_tokenizer.output,
    output:
        f"{MLM_DATA}/glue_standin.npz",
    log:
        f"{RESULTS}/logs/{SB}/mlm/glue_data.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/glue_data.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        corpus_dir=lambda wildcards, input: os.path.dirname(input.train),
        settings=mlm_glue_json,
    shell:
        "python -m repro simplified_blocks glue-data --corpus-dir {params.corpus_dir} --tokenizer {input.tokenizer} "
        "--settings {params.settings:q} --out {output} > {log} 2>&1"


# Paper scale (mlm.data.source hub): the pre-training text (the Pile) and the GLUE tasks from the hub,
# encoded by a WordPiece tokenizer, in the formats the pre-training and fine-tuning steps read.
rule simplified_blocks_mlm_hub_text:
    output:
        train=f"{MLM_HUB_DIR}/text/train.npz",
        valid=f"{MLM_HUB_DIR}/text/valid.npz",
        card=f"{MLM_HUB_DIR}/text/card.json",
    log:
        f"{RESULTS}/logs/{SB}/mlm/hub_text.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/hub_text.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=32000,
        runtime=600,
    params:
        dataset=MLM_DATA_CFG.get("text", "pile"),
        tokenizer=MLM_DATA_CFG.get("tokenizer", ""),
        train_documents=MLM_DATA_CFG.get("train_documents", 1),
        valid_documents=MLM_DATA_CFG.get("valid_documents", 1),
        mirror=mirror_option(MLM_DATA_CFG),
        out_dir=parent_dir,
    shell:
        "python -m repro data hub-tokens --masked-lm --dataset {params.dataset} --tokenizer {params.tokenizer:q} "
        "--out-dir {params.out_dir} --train-rows {params.train_documents} "
        "--valid-rows {params.valid_documents} {params.mirror} > {log} 2>&1"


rule simplified_blocks_mlm_hub_glue:
    output:
        f"{MLM_HUB_DIR}/glue.npz",
    log:
        f"{RESULTS}/logs/{SB}/mlm/hub_glue.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/hub_glue.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        tokenizer=MLM_DATA_CFG.get("tokenizer", ""),
        max_tokens=MLM_CFG["model"]["max_seq_len"],
        limit=mlm_glue_limit_option(),
        mirror=mirror_option(MLM_DATA_CFG),
    shell:
        "python -m repro simplified_blocks hub-glue --tokenizer {params.tokenizer:q} --out {output} "
        "--max-tokens {params.max_tokens} {params.limit} {params.mirror} > {log} 2>&1"


# The blocks are compared at equal time through these step times: every pre-training run's number of
# updates comes from this table alone. With mlm.step_times_file the table is a kept one, checked against
# the blocks and copied, so that runs given the same file train the same models.
rule simplified_blocks_mlm_step_times:
    input:
        tokens=mlm_step_times_tokens,
        kept=MLM_KEPT_STEP_TIMES,
    output:
        f"{SB_DATA}/mlm_step_times.csv",
    log:
        f"{RESULTS}/logs/{SB}/mlm/step_times.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/step_times.tsv"
    priority: PRIORITY_TIMING
    conda:
        ENV
    # A timing job holds every core, so that no other job runs beside it; it times with mlm.threads,
    # as the runs train. Copying a kept table needs one.
    threads: 1 if MLM_KEPT_STEP_TIMES else TIMING_THREADS
    resources:
        mem_mb=MLM_PRETRAIN_MEM_MB,
        runtime=20,
    params:
        specs=mlm_step_times_specs,
        settings=json.dumps(MLM_CFG["step_timing"], sort_keys=True),
        vocabulary=mlm_step_times_vocabulary,
        threads=MLM_CFG["threads"],
        reuse=mlm_reuse_option,
    shell:
        "python -m repro simplified_blocks step-times --specs {params.specs:q} --settings {params.settings:q} "
        "{params.vocabulary} --threads {params.threads} {params.reuse} --out {output} > {log} 2>&1"


rule simplified_blocks_mlm_pretrain:
    input:
        train=mlm_token_file("train"),
        valid=mlm_token_file("valid"),
        step_times=rules.simplified_blocks_mlm_step_times.output,
    output:
        model=f"{MLM_RUNS}/{{variant}}/seed{{seed}}/model.safetensors",
        run=f"{MLM_RUNS}/{{variant}}/seed{{seed}}/run.json",
        metrics=f"{MLM_RUNS}/{{variant}}/seed{{seed}}/metrics.jsonl",
        heldout=f"{MLM_RUNS}/{{variant}}/seed{{seed}}/heldout.json",
    log:
        f"{RESULTS}/logs/{SB}/mlm/pretrain/{{variant}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/pretrain/{{variant}}_seed{{seed}}.tsv"
    wildcard_constraints:
        variant=mlm_variant_pattern(),
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: MLM_CFG["threads"]
    resources:
        mem_mb=MLM_PRETRAIN_MEM_MB,
        runtime=30,
    params:
        spec=mlm_spec_json,
        run_dir=parent_dir,
    shell:
        "python -m repro simplified_blocks pretrain --spec {params.spec:q} --train-tokens {input.train} --valid-tokens {input.valid} "
        "--step-times {input.step_times} --run-dir {params.run_dir} --threads {threads} > {log} 2>&1"


rule simplified_blocks_mlm_curves:
    input:
        mlm_all_runs,
    output:
        f"{SB_DATA}/mlm_curves.csv",
    log:
        f"{RESULTS}/logs/{SB}/mlm/curves.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/curves.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        runs=run_dirs,
    shell:
        "python -m repro analyse training-curves --runs {params.runs} --out {output} > {log} 2>&1"


rule simplified_blocks_mlm_finetune:
    input:
        runs=mlm_finetuned_runs,
        glue=MLM_GLUE_FILE,
    output:
        f"{SB_DATA}/mlm_finetune/part{{shard}}.csv",
    log:
        f"{RESULTS}/logs/{SB}/mlm/finetune/part{{shard}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/finetune/part{{shard}}.tsv"
    wildcard_constraints:
        shard=r"\d+",
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: MLM_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        run_dirs=lambda wildcards, input: " ".join(os.path.dirname(path) for path in input.runs),
        settings=mlm_finetune_json,
        seeds=mlm_finetune_seeds,
        device=MLM_FINETUNE_DEVICE,
    shell:
        "python -m repro simplified_blocks finetune --run-dirs {params.run_dirs} --glue {input.glue} --settings {params.settings:q} "
        "--seeds {params.seeds} --out {output} --threads {threads} --device {params.device} > {log} 2>&1"


rule simplified_blocks_mlm_glue:
    input:
        mlm_finetune_csvs,
    output:
        scores=f"{SB_DATA}/glue_scores.csv",
        average=f"{SB_DATA}/glue_average.csv",
    log:
        f"{RESULTS}/logs/{SB}/mlm/glue.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/mlm/glue.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m repro simplified_blocks glue --inputs {input} --out-scores {output.scores} --out-average {output.average} > {log} 2>&1"


# The loss plots mark the levels of the pre-training text's held-out split, passed as `levels`.
for _item in ("fig07", "fig27"):
    register_notebook(
        SB, _item, [sb_data("mlm_curves.csv"), sb_data("mlm_step_times.csv"), MLM_LEVELS], {"levels": MLM_LEVELS}
    )
register_notebook(SB, "table02", [sb_data("glue_scores.csv"), sb_data("glue_average.csv")])
# Table 1's GLUE column: table01.py joins glue_average.csv when it is among its inputs (after the three
# decoder tables); added here, once, so the decoder rules need not know about the masked-LM part.
if sb_data("glue_average.csv") not in NOTEBOOKS[(SB, "table01")]["inputs"]:
    NOTEBOOKS[(SB, "table01")]["inputs"].append(sb_data("glue_average.csv"))
