# "Allocation of Parameters in Transformers" (Yu, Jiang, Cheng, Yu, Li & Li, arXiv 2510.03784, 2025).
# Theory computed exactly (softmax saturation, low-rank score error, the allocation bound), then
# synthetic training runs: heads swept at a fixed width on white-noise sequence tasks, and low-rank
# student heads across sequence lengths; then small decoders trained on the code corpus: one head
# replaced by SVD or random students (Figs 4, 6, 9), their attention logits against the prefix length
# (Fig 10), and decoders with reduced head dims across sequence lengths (Fig 5). Every step writes a
# tidy CSV under data/; one notebook per figure or table reads them; the claims read the same CSVs.


include: "param_allocation_common.smk"


rule param_allocation_jacobian:
    output:
        f"{PA_DIR}/data/jacobian.csv",
    log:
        f"{RESULTS}/logs/{PA}/jacobian.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/jacobian.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        spec=pa_jacobian_spec,
    shell:
        "python -m repro param_allocation jacobian --spec {params.spec:q} --out {output} > {log} 2>&1"


rule param_allocation_low_rank:
    output:
        f"{PA_DIR}/data/low_rank_scores.csv",
    log:
        f"{RESULTS}/logs/{PA}/low_rank.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/low_rank.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        spec=pa_low_rank_spec,
    shell:
        "python -m repro param_allocation low-rank --spec {params.spec:q} --out {output} > {log} 2>&1"


rule param_allocation_bound:
    output:
        f"{PA_DIR}/data/allocation_bound.csv",
    log:
        f"{RESULTS}/logs/{PA}/bound.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/bound.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        spec=pa_bound_spec,
    shell:
        "python -m repro param_allocation bound --spec {params.spec:q} --out {output} > {log} 2>&1"


# One job per seed: every task, every head count, both position kinds (one process start per seed).
rule param_allocation_sweep:
    output:
        f"{PA_DIR}/data/sweep/seed{{seed}}.csv",
    log:
        f"{RESULTS}/logs/{PA}/sweep/seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/sweep/seed{{seed}}.tsv"
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: PA_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        spec=pa_sweep_spec,
        runs_dir=pa_runs_dir("sweep"),
    shell:
        "python -m repro param_allocation sweep --spec {params.spec:q} "
        "--seed {wildcards.seed} --runs-dir {params.runs_dir} --threads {threads} --out {output} > {log} 2>&1"


rule param_allocation_saturation:
    output:
        f"{PA_DIR}/data/saturation/seed{{seed}}.csv",
    log:
        f"{RESULTS}/logs/{PA}/saturation/seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/saturation/seed{{seed}}.tsv"
    conda:
        ENV
    threads: PA_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        spec=pa_saturation_spec,
        runs_dir=pa_runs_dir("saturation"),
    shell:
        "python -m repro param_allocation saturation --spec {params.spec:q} --seed {wildcards.seed} "
        "--runs-dir {params.runs_dir} --threads {threads} --out {output} > {log} 2>&1"


rule param_allocation_gather_sweep:
    input:
        pa_sweep_files,
    output:
        f"{PA_DIR}/data/heads_sweep.csv",
    log:
        f"{RESULTS}/logs/{PA}/gather_sweep.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/gather_sweep.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m repro gather --group {output} {input} > {log} 2>&1"


use rule param_allocation_gather_sweep as param_allocation_gather_saturation with:
    input:
        pa_saturation_files,
    output:
        f"{PA_DIR}/data/saturation_trained.csv",
    log:
        f"{RESULTS}/logs/{PA}/gather_saturation.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/gather_saturation.tsv"


# Paper scale (data.source hub): the first rows of WikiText-103 encoded by a hub tokenizer into token
# files of the offline corpus's format, so the training and analysis steps read either unchanged.
rule param_allocation_hub_tokens:
    output:
        train=f"{PA_HUB_TOKENS}/train.npz",
        valid=f"{PA_HUB_TOKENS}/valid.npz",
        card=f"{PA_HUB_TOKENS}/card.json",
    log:
        f"{RESULTS}/logs/{PA}/hub_tokens.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/hub_tokens.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        dataset=PA_DATA_CFG.get("dataset", ""),
        tokenizer=PA_DATA_CFG.get("tokenizer", ""),
        train_rows=PA_DATA_CFG.get("train_rows", 1),
        valid_rows=PA_DATA_CFG.get("valid_rows", 1),
        mirror=mirror_option(PA_DATA_CFG),
        out_dir=parent_dir,
    shell:
        "python -m repro data hub-tokens --dataset {params.dataset} --tokenizer {params.tokenizer:q} "
        "--out-dir {params.out_dir} --train-rows {params.train_rows} "
        "--valid-rows {params.valid_rows} {params.mirror} > {log} 2>&1"


# -- trained decoders: single-head replacement (Figs 4, 6, 9), logit norms (Fig 10), head dims (Fig 5) ---
rule param_allocation_teacher_train:
    input:
        train=pa_token_file("train"),
        valid=pa_token_file("valid"),
    output:
        model=f"{PA_TEACHERS}/seed{{seed}}/model.safetensors",
        run=f"{PA_TEACHERS}/seed{{seed}}/run.json",
        metrics=f"{PA_TEACHERS}/seed{{seed}}/metrics.jsonl",
        heldout=f"{PA_TEACHERS}/seed{{seed}}/heldout.json",
    log:
        f"{RESULTS}/logs/{PA}/teacher/train_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/teacher/train_seed{{seed}}.tsv"
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: PA_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=pa_teacher_spec,
        eval_chunks=PA_CFG["lm"]["eval_chunks"],
        heldout_chunks=PA_CFG["lm"]["heldout_chunks"],
        run_dir=parent_dir,
    shell:
        "python -m repro train lm --spec {params.spec:q} --train-tokens {input.train} --valid-tokens {input.valid} "
        "--eval-chunks {params.eval_chunks} --heldout-chunks {params.heldout_chunks} --run-dir {params.run_dir} "
        "--threads {threads} > {log} 2>&1"


# One job per teacher: every replacement (ablations, SVD and random students, zero-shot and
# fine-tuned) and the logit statistics.
rule param_allocation_teacher_analysis:
    input:
        model=rules.param_allocation_teacher_train.output.model,
        run=rules.param_allocation_teacher_train.output.run,
        heldout=rules.param_allocation_teacher_train.output.heldout,
        train=pa_token_file("train"),
        valid=pa_token_file("valid"),
    output:
        replacement=f"{PA_DIR}/data/teacher/replacement_seed{{seed}}.csv",
        positions=f"{PA_DIR}/data/teacher/positions_seed{{seed}}.csv",
        logits=f"{PA_DIR}/data/teacher/logits_seed{{seed}}.csv",
    log:
        f"{RESULTS}/logs/{PA}/teacher/analysis_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/teacher/analysis_seed{{seed}}.tsv"
    conda:
        ENV
    threads: PA_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=pa_teacher_analysis_spec,
        teacher=pa_teacher_dir,
        runs_dir=pa_student_runs,
    shell:
        "python -m repro param_allocation teacher --spec {params.spec:q} --seed {wildcards.seed} "
        "--teacher {params.teacher} --train-tokens {input.train} --valid-tokens {input.valid} "
        "--runs-dir {params.runs_dir} --threads {threads} --out {output.replacement} "
        "--out-positions {output.positions} --out-logits {output.logits} > {log} 2>&1"


# One job per seed: a decoder for every (sequence length, head dim).
rule param_allocation_decoders:
    input:
        train=pa_token_file("train"),
        valid=pa_token_file("valid"),
    output:
        runs=f"{PA_DIR}/data/decoders/seed{{seed}}.csv",
        curves=f"{PA_DIR}/data/decoders/curves_seed{{seed}}.csv",
    log:
        f"{RESULTS}/logs/{PA}/decoders/seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/decoders/seed{{seed}}.tsv"
    priority: PRIORITY_LONG
    conda:
        ENV
    threads: PA_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        spec=pa_decoders_spec,
        runs_dir=pa_decoder_runs,
    shell:
        "python -m repro param_allocation decoders --spec {params.spec:q} --seed {wildcards.seed} "
        "--train-tokens {input.train} --valid-tokens {input.valid} --runs-dir {params.runs_dir} "
        "--threads {threads} --out {output.runs} --out-curves {output.curves} > {log} 2>&1"


rule param_allocation_gather_lm:
    input:
        unpack(pa_lm_gather_inputs),
    output:
        replacement=f"{PA_DIR}/data/replacement.csv",
        positions=f"{PA_DIR}/data/replacement_positions.csv",
        logits=f"{PA_DIR}/data/logit_norms.csv",
        decoders=f"{PA_DIR}/data/decoders.csv",
        curves=f"{PA_DIR}/data/decoder_curves.csv",
    log:
        f"{RESULTS}/logs/{PA}/gather_lm.log",
    benchmark:
        f"{RESULTS}/benchmarks/{PA}/gather_lm.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        groups=pa_gather_groups,
    shell:
        "python -m repro gather {params.groups} > {log} 2>&1"


# -- figures and tables (notebooks/param_allocation/<item>.py) ---------------------------------------
register_notebook(PA, "fig01", [f"{PA_DIR}/data/jacobian.csv"])
register_notebook(PA, "fig02", [f"{PA_DIR}/data/heads_sweep.csv", f"{PA_DIR}/data/allocation_bound.csv"])
register_notebook(PA, "fig03", [f"{PA_DIR}/data/low_rank_scores.csv", f"{PA_DIR}/data/saturation_trained.csv"])
register_notebook(
    PA, "fig07", [f"{PA_DIR}/data/heads_sweep.csv", f"{PA_DIR}/data/allocation_bound.csv"], source="heads_sweep_task"
)
register_notebook(
    PA, "fig08", [f"{PA_DIR}/data/heads_sweep.csv", f"{PA_DIR}/data/allocation_bound.csv"], source="heads_sweep_task"
)
register_notebook(PA, "fig04", [f"{PA_DIR}/data/replacement.csv"])
PA_LEVELS = f"{PA_DIR}/data/lm_reference_levels.json"  # the decoders' held-out split (rule lm_reference_levels)
register_notebook(
    PA,
    "fig05",
    [f"{PA_DIR}/data/decoders.csv", f"{PA_DIR}/data/decoder_curves.csv", PA_LEVELS],
    {"levels": PA_LEVELS},
)
register_notebook(PA, "fig06", [f"{PA_DIR}/data/replacement_positions.csv"])
register_notebook(PA, "fig09", [f"{PA_DIR}/data/replacement.csv"])
register_notebook(PA, "fig10", [f"{PA_DIR}/data/logit_norms.csv"])
register_notebook(
    PA,
    "table01",
    [
        f"{PA_DIR}/data/heads_sweep.csv",
        f"{PA_DIR}/data/saturation_trained.csv",
        f"{PA_DIR}/data/replacement.csv",
        f"{PA_DIR}/data/decoders.csv",
    ],
    {"config": {key: PA_CFG[key] for key in ("sweep", "saturation", "lm", "replacement", "decoders")}},
)
register_notebook(PA, "table02", [f"{PA_DIR}/claims.csv"])
