# Studies across the four works (repro.papers.cross_paper): one paper's measure applied to another
# paper's trained models, evaluation only. Studies 1-2 read simplified_blocks' decoders of one figure:
# per decoder, Sixteen Heads' head importance and prune-by-importance curve and Diversity of Layers'
# decomposition of the layer increments -> tidy CSVs -> one notebook per study -> claims (new findings).
# Study 3 reads param_allocation's head-count sweeps: per seed, every model pruned by importance.
# Study 4 reads sixteen_heads' NLI classifiers: each head's softmax saturation beside its importance.


include: "cross_paper_common.smk"


rule cross_paper_block_eval:
    input:
        unpack(cp_decoder),
    output:
        expand(f"{CP_BLOCKS}/{{{{variant}}}}/seed{{{{seed}}}}/{{name}}", name=CP_BLOCK_FILES),
    log:
        f"{RESULTS}/logs/{CP}/block_eval/{{variant}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{CP}/block_eval/{{variant}}_seed{{seed}}.tsv"
    conda:
        ENV
    threads: CP_CFG["blocks"]["threads"]
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        run_dir=lambda wildcards: f"{SB_RUNS}/{wildcards.variant}/seed{wildcards.seed}",
        out_dir=lambda wildcards: f"{CP_BLOCKS}/{wildcards.variant}/seed{wildcards.seed}",
        batch_size=CP_CFG["blocks"]["batch_size"],
    shell:
        "python -m repro cross_paper block-eval --run-dir {params.run_dir} --valid {input.valid} "
        "--variant {wildcards.variant} --seed {wildcards.seed} --batch-size {params.batch_size} --threads {threads} "
        "--out-dir {params.out_dir} > {log} 2>&1"


rule cross_paper_collect_blocks:
    input:
        runs=[f"{run}/{name}" for run in CP_BLOCK_RUNS for name in CP_BLOCK_FILES],
        levels=f"{SB_DATA}/lm_reference_levels.json",
    output:
        tables=expand(f"{CP_DIR}/data/{{name}}", name=CP_BLOCK_TABLES),
        levels=f"{CP_DIR}/data/block_reference_levels.json",
    log:
        f"{RESULTS}/logs/{CP}/collect_blocks.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        runs=CP_BLOCK_RUNS,
        out_dir=parent_dir,
    shell:
        "python -m repro cross_paper collect-blocks --runs {params.runs} --levels {input.levels} "
        "--out-dir {params.out_dir} > {log} 2>&1"


CP_BLOCK_DATA = rules.cross_paper_collect_blocks.output
register_notebook(CP, "fig01", [*CP_BLOCK_DATA.tables, CP_BLOCK_DATA.levels])
register_notebook(CP, "fig02", [*CP_BLOCK_DATA.tables, CP_BLOCK_DATA.levels])


rule cross_paper_saturation:
    input:
        unpack(cp_classifiers),
    output:
        f"{CP_DIR}/data/head_saturation.csv",
    log:
        f"{RESULTS}/logs/{CP}/saturation.log",
    benchmark:
        f"{RESULTS}/benchmarks/{CP}/saturation.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        runs=cp_classifier_runs,
        seeds=sh_seeds(cp_specs.SATURATION_TASK),
        task=cp_specs.SATURATION_TASK,
    shell:
        "python -m repro cross_paper saturation --runs {params.runs} --seeds {params.seeds} --task {params.task} "
        "--task-file {input.task} --importance {input.importance} --out {output} > {log} 2>&1"


register_notebook(CP, "fig04", rules.cross_paper_saturation.output)


rule cross_paper_sweep_prune:
    input:
        f"{RESULTS}/{PA}/data/sweep/seed{{seed}}.csv",
    output:
        table=f"{CP_SWEEP}/seed{{seed}}.csv",
        curves=f"{CP_SWEEP}/seed{{seed}}_curves.csv",
    log:
        f"{RESULTS}/logs/{CP}/sweep_prune/seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{CP}/sweep_prune/seed{{seed}}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        spec=cp_sweep_spec,
        runs_dir=pa_runs_dir("sweep"),
    shell:
        "python -m repro cross_paper sweep-prune --spec {params.spec:q} --seed {wildcards.seed} "
        "--runs-dir {params.runs_dir} --sweep-csv {input} --out {output.table} --out-curves {output.curves} "
        "> {log} 2>&1"


rule cross_paper_gather_sweeps:
    input:
        tables=expand(f"{CP_SWEEP}/seed{{seed}}.csv", seed=CP_SWEEP_SEEDS),
        curves=expand(f"{CP_SWEEP}/seed{{seed}}_curves.csv", seed=CP_SWEEP_SEEDS),
    output:
        table=f"{CP_DIR}/data/sweep_pruning.csv",
        curves=f"{CP_DIR}/data/sweep_pruning_curves.csv",
    log:
        f"{RESULTS}/logs/{CP}/gather_sweeps.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m repro gather --group {output.table} {input.tables} --group {output.curves} {input.curves} "
        "> {log} 2>&1"


register_notebook(
    CP, "fig03", [rules.cross_paper_gather_sweeps.output.table, rules.cross_paper_gather_sweeps.output.curves]
)
