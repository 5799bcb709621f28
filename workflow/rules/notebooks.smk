# -- the notebook pattern ----------------------------------------------------------
# notebooks/<paper>/<item>.py (jupytext percent, a `parameters` cell; items that differ only in
# their settings share one source, see register_notebook) is executed by
# papermill into results/<scale>/<paper>/notebooks/<item>.ipynb (+ .html); the notebook
# writes its figure (png, pdf) or table (csv, md). Notebooks only read, plot and tabulate.
# One definition makes both rules, figure_notebook and table_notebook: they differ only in
# the folder, the two files the notebook writes and the item names they take. A notebook depends
# on its data and its code: its source file, and the repro modules it imports (param `code`, their
# digest: a changed plot helper redraws the figures that use it, and no others). Its entry in the
# HTML report, captioned with the paper's verdicts, is the copy that rule report_entry makes.
NOTEBOOK_KINDS = {
    "figure": ("figures", "png", "pdf", r"fig\d\d"),
    "table": ("tables", "csv", "md", r"table\d\d"),
}

for kind, (folder, shown, other, pattern) in NOTEBOOK_KINDS.items():

    rule:
        name:
            f"{kind}_notebook"
        input:
            notebook=notebook_source,
            data=notebook_inputs,
        output:
            shown=f"{RESULTS}/{{paper}}/{folder}/{{item}}.{shown}",
            other=f"{RESULTS}/{{paper}}/{folder}/{{item}}.{other}",
            ipynb=f"{RESULTS}/{{paper}}/notebooks/{{item}}.ipynb",
            html=f"{RESULTS}/{{paper}}/notebooks/{{item}}.html",
        log:
            f"{RESULTS}/logs/notebooks/{{paper}}/{{item}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/notebooks/{{paper}}/{{item}}.tsv"
        wildcard_constraints:
            item=pattern,
        conda:
            ENV
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            args=notebook_params,
            code=notebook_code,
            results=results_root,
            scale=SCALE,
        shell:
            "python -m repro notebook run {input.notebook} --paper {wildcards.paper} --item {wildcards.item} "
            "--results-dir {params.results} --scale {params.scale} --timeout 1200 {params.args} > {log} 2>&1"
