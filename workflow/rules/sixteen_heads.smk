# "Are Sixteen Heads Really Better than One?" (Michel, Levy & Neubig, NeurIPS 2019).
# Synthetic task -> one model per (task, seed) -> ablation sweeps and pruning curves per run
# (tidy CSVs) -> gathered tables -> one notebook per figure/table -> claims.
#   cls models (BERT analogue) on nli; s2s models (WMT analogue) on mt.


include: "sixteen_heads_common.smk"


PAPERS.append(SH)


wildcard_constraints:
    task=r"[a-z0-9]+",


rule sixteen_heads_data:
    output:
        data=f"{SH_DIR}/data/tasks/{{task}}.npz",
        card=f"{SH_DIR}/data/tasks/{{task}}.card.json",
    params:
        sizes=sh_size_args,
        generator=sh_param_args,
        seed=SH_CFG["data_seed"],
    log:
        f"{RESULTS}/logs/{SH}/data/{{task}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/data/{{task}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    shell:
        "python -m repro data synthetic --task {wildcards.task} --seed {params.seed} {params.sizes} {params.generator} "
        "--out {output.data} > {log} 2>&1"


rule sixteen_heads_train:
    input:
        data=rules.sixteen_heads_data.output.data,
    output:
        model=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/model.safetensors",
        run=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/run.json",
        metrics=f"{SH_DIR}/runs/{{task}}/seed{{seed}}/metrics.jsonl",
    params:
        spec=sh_train_spec,
        run_dir=parent_dir,
    log:
        f"{RESULTS}/logs/{SH}/train/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/train/{{task}}_seed{{seed}}.tsv"
    threads: SH_CFG["threads"]
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        ENV
    shell:
        "python -m repro sixteen_heads train --task-file {input.data} --spec {params.spec:q} "
        "--run-dir {params.run_dir} --threads {threads} > {log} 2>&1"


rule sixteen_heads_ablate:
    input:
        data=rules.sixteen_heads_data.output.data,
        model=rules.sixteen_heads_train.output.model,
    output:
        f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_ablation.csv",
    params:
        spec=sh_analysis_spec,
        run_dir=sh_run_dir,
    log:
        f"{RESULTS}/logs/{SH}/ablate/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/ablate/{{task}}_seed{{seed}}.tsv"
    threads: SH_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        ENV
    shell:
        "python -m repro sixteen_heads ablate --run-dir {params.run_dir} --task-file {input.data} "
        "--spec {params.spec:q} --threads {threads} --out {output} > {log} 2>&1"


rule sixteen_heads_prune:
    input:
        data=rules.sixteen_heads_data.output.data,
        model=rules.sixteen_heads_train.output.model,
        ablation=rules.sixteen_heads_ablate.output,
    output:
        importance=f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_importance.csv",
        pruning=f"{SH_DIR}/data/runs/{{task}}_seed{{seed}}_pruning.csv",
    params:
        spec=sh_analysis_spec,
        run_dir=sh_run_dir,
    log:
        f"{RESULTS}/logs/{SH}/prune/{{task}}_seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/prune/{{task}}_seed{{seed}}.tsv"
    threads: SH_CFG["threads"]
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        ENV
    shell:
        "python -m repro sixteen_heads prune --run-dir {params.run_dir} --task-file {input.data} "
        "--spec {params.spec:q} --threads {threads} --ablation {input.ablation} "
        "--importance-out {output.importance} --out {output.pruning} > {log} 2>&1"


rule sixteen_heads_gather:
    input:
        sh_gather_inputs,
    output:
        ablation=f"{SH_DIR}/data/ablation.csv",
        importance=f"{SH_DIR}/data/importance.csv",
        pruning=f"{SH_DIR}/data/pruning.csv",
    params:
        out_dir=parent_dir,
    log:
        f"{RESULTS}/logs/{SH}/gather.log",
    benchmark:
        f"{RESULTS}/benchmarks/{SH}/gather.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    shell:
        "python -m repro sixteen_heads gather --inputs {input} --out-dir {params.out_dir} > {log} 2>&1"


SH_ABLATION = f"{SH_DIR}/data/ablation.csv"
SH_PRUNING = f"{SH_DIR}/data/pruning.csv"
SH_IMPORTANCE = f"{SH_DIR}/data/importance.csv"
SH_PARAMS = {"alpha": SH_CFG["analysis"]["alpha"]}

register_notebook(SH, "fig01", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table01", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table02", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table03", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "fig02", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "fig03", [SH_PRUNING, SH_IMPORTANCE], SH_PARAMS)
register_notebook(SH, "table05", [SH_ABLATION], SH_PARAMS)
register_notebook(SH, "table06", [SH_ABLATION], SH_PARAMS)
