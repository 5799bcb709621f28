# -- the notebook pattern ----------------------------------------------------------
# notebooks/<paper>/<item>.py (jupytext percent, a `parameters` cell) is executed by
# papermill into results/<paper>/notebooks/<item>.ipynb (+ .html); the notebook writes
# its figure (png, pdf) or table (csv, md). Notebooks only read, plot and tabulate.
rule figure_notebook:
    input:
        notebook="notebooks/{paper}/{item}.py",
        data=notebook_inputs,
        claims=paper_claims_file,
    output:
        png=report(
            f"{RESULTS}/{{paper}}/figures/{{item}}.png",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
        ),
        pdf=f"{RESULTS}/{{paper}}/figures/{{item}}.pdf",
        ipynb=f"{RESULTS}/{{paper}}/notebooks/{{item}}.ipynb",
        html=f"{RESULTS}/{{paper}}/notebooks/{{item}}.html",
    wildcard_constraints:
        item=r"fig\d\d",
    params:
        args=notebook_params,
        caption=report_caption,
        results=results_root,
        scale=SCALE,
    log:
        f"{RESULTS}/logs/notebooks/{{paper}}/{{item}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/notebooks/{{paper}}/{{item}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        ENV
    shell:
        "python -m repro notebook run {input.notebook} --paper {wildcards.paper} --item {wildcards.item} "
        "--results-dir {params.results} --scale {params.scale} --timeout 1200 {params.args} > {log} 2>&1"


rule table_notebook:
    input:
        notebook="notebooks/{paper}/{item}.py",
        data=notebook_inputs,
        claims=paper_claims_file,
    output:
        csv=report(
            f"{RESULTS}/{{paper}}/tables/{{item}}.csv",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
        ),
        md=f"{RESULTS}/{{paper}}/tables/{{item}}.md",
        ipynb=f"{RESULTS}/{{paper}}/notebooks/{{item}}.ipynb",
        html=f"{RESULTS}/{{paper}}/notebooks/{{item}}.html",
    wildcard_constraints:
        item=r"table\d\d",
    params:
        args=notebook_params,
        caption=report_caption,
        results=results_root,
        scale=SCALE,
    log:
        f"{RESULTS}/logs/notebooks/{{paper}}/{{item}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/notebooks/{{paper}}/{{item}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        ENV
    shell:
        "python -m repro notebook run {input.notebook} --paper {wildcards.paper} --item {wildcards.item} "
        "--results-dir {params.results} --scale {params.scale} --timeout 1200 {params.args} > {log} 2>&1"


