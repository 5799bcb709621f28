# The scorecard: every paper's judged claims in one table (results/scorecard.{csv,md}).


rule scorecard:
    input:
        expand(f"{RESULTS}/{{paper}}/claims.csv", paper=PAPERS),
    output:
        csv=report(f"{RESULTS}/scorecard.csv", caption="../report/scorecard.rst", category="Scorecard"),
        md=f"{RESULTS}/scorecard.md",
    log:
        f"{RESULTS}/logs/scorecard.log",
    conda:
        ENV
    shell:
        "python -m repro claims scorecard --inputs {input} --out-csv {output.csv} --out-md {output.md} > {log} 2>&1"


# -- claims ------------------------------------------------------------------------
rule paper_claims:
    input:
        claims_inputs,
    output:
        f"{RESULTS}/{{paper}}/claims.csv",
    params:
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),
        scale=SCALE,
    log:
        f"{RESULTS}/logs/claims/{{paper}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/claims/{{paper}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    shell:
        "python -m repro claims judge --paper {wildcards.paper} --results-dir {params.results} --scale {params.scale} "
        "--out {output} > {log} 2>&1"
