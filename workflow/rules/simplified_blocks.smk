# "Simplifying Transformer Blocks" (He & Hofmann, ICLR 2024).
# Decoder language models on the code corpus; one run per (variant, seed), shared
# between figures; each figure's data is a tidy CSV read by its notebook and claims.

SB = "simplified_blocks"
PAPERS.append(SB)
SB_RUNS = f"{RESULTS}/{SB}/runs"


rule simplified_blocks_train:
    input:
        train=rules.code_tokens.output.train,
        valid=rules.code_tokens.output.valid,
    output:
        model=f"{SB_RUNS}/{{variant}}/seed{{seed}}/model.safetensors",
        run=f"{SB_RUNS}/{{variant}}/seed{{seed}}/run.json",
        metrics=f"{SB_RUNS}/{{variant}}/seed{{seed}}/metrics.jsonl",
    params:
        spec=lambda wildcards: run_spec(SB, wildcards.variant, wildcards.seed),
        eval_chunks=config[SB]["eval_chunks"],
        run_dir=parent_dir,
    log:
        f"{RESULTS}/logs/{SB}/train/{{variant}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/train/{{variant}}_seed{{seed}}.tsv"
    threads: config[SB]["threads"]
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        ENV
    shell:
        "python -m repro train lm --spec {params.spec:q} --train-tokens {input.train} --valid-tokens {input.valid} "
        "--eval-chunks {params.eval_chunks} --run-dir {params.run_dir} --threads {threads} > {log} 2>&1"


rule simplified_blocks_curves:
    input:
        lambda wildcards: figure_runs(SB, wildcards.item),
    output:
        f"{RESULTS}/{SB}/data/{{item}}_curves.csv",
    params:
        runs=run_dirs,
    log:
        f"{RESULTS}/logs/{SB}/curves/{{item}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SB}/curves/{{item}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    shell:
        "python -m repro analyse training-curves --runs {params.runs} --out {output} > {log} 2>&1"


register_notebook(SB, "fig26", [f"{RESULTS}/{SB}/data/fig26_curves.csv"])
