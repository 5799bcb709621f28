# The scorecard: every paper's judged claims in one table (results/scorecard.{csv,md}).
# Each report rule carries the digest of the module that writes its file (param `code`,
# repro.pipeline.code_digest), so that a changed report module rewrites the file.


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
    params:
        code=module_digest("repro.pipeline.scorecard"),
    shell:
        "python -m repro claims scorecard --inputs {input} --out-csv {output.csv} --out-md {output.md} > {log} 2>&1"


# -- claims ------------------------------------------------------------------------
rule paper_claims:
    input:
        claims_inputs,
    output:
        f"{RESULTS}/{{paper}}/claims.csv",
    log:
        f"{RESULTS}/logs/claims/{{paper}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/claims/{{paper}}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),
        scale=SCALE,
        # a changed claim, gate or null is judged again though no input changed
        code=lambda wildcards: claims_digest(wildcards.paper),
    shell:
        "python -m repro claims judge --paper {wildcards.paper} --results-dir {params.results} --scale {params.scale} "
        "--out {output} > {log} 2>&1"


# -- report entries ----------------------------------------------------------------
# The HTML report shows every figure and table with a caption that carries this run's verdicts.
# A caption is a param, and a changed param reruns its job: the entry is therefore a copy made by
# this local rule, so that a changed verdict reruns a copy and not the notebook.
rule report_entry:
    input:
        item=item_file,
        claims=paper_claims_file,
    output:
        report(
            f"{RESULTS}/{{paper}}/report/{{item}}.{{suffix}}",
            caption="../report/item.rst",
            category="{paper}",
            subcategory="{item}",
        ),
    log:
        f"{RESULTS}/logs/report/{{paper}}/{{item}}.{{suffix}}.log",
    wildcard_constraints:
        suffix="png|csv",
    localrule: True
    conda:
        ENV
    params:
        caption=report_caption,
    # A shell command, not a `run:` block: Snakemake runs a `run:` job in a new process that parses the
    # whole workflow again (about 10 s), and there is one entry per figure and table.
    shell:
        "cp {input.item} {output} && echo 'copied {input.item}' > {log}"


# -- audit trail -------------------------------------------------------------------
# Lineage card per figure and table, compute accounting over every benchmark file, and
# a reproducibility dossier per paper. They read Snakemake's job records, so they run
# after everything they describe.
# One job per paper writes the cards of all its items: a card takes a fraction of a second, and its
# job's start would cost more. A rule per paper, since a rule's outputs cannot vary with a wildcard.
for _paper in sorted({paper for paper, _ in NOTEBOOKS}):

    rule:
        name:
            f"lineage_cards_{_paper}"
        input:
            figures_and_tables=[item_path(_paper, item) for item in paper_items(_paper)],
            notebooks=[f"{RESULTS}/{_paper}/notebooks/{item}.html" for item in paper_items(_paper)],
        output:
            lineage_cards(_paper),
        log:
            f"{RESULTS}/logs/lineage/{_paper}.log",
        conda:
            ENV
        params:
            paper=_paper,
            cards=lineage_card_arguments(_paper),
            code=module_digest("repro.pipeline.lineage"),
        shell:
            "python -m repro report lineage --paper {params.paper} {params.cards} > {log} 2>&1"


rule compute_accounting:
    input:
        scorecard=rules.scorecard.output.csv,
        notebooks=all_notebook_outputs(),
    output:
        report(f"{RESULTS}/compute.csv", caption="../report/compute.rst", category="Scorecard"),
    log:
        f"{RESULTS}/logs/compute.log",
    conda:
        ENV
    params:
        results=lambda wildcards, output: os.path.dirname(output[0]),
        papers=" ".join(PAPERS),
        code=module_digest("repro.pipeline.compute"),
    shell:
        "python -m repro report compute --results-dir {params.results} --papers {params.papers} --out {output} "
        "> {log} 2>&1"


# The run's configuration, resolved (scale file, --config overrides, seed offset), written once for the
# rules that read all of it, instead of a JSON of every key on each of their command lines and logs.
rule resolved_config:
    output:
        f"{RESULTS}/config.resolved.json",
    log:
        f"{RESULTS}/logs/resolved_config.log",
    localrule: True
    conda:
        ENV
    params:
        config=lambda wildcards: json.dumps(config, sort_keys=True, indent=1),
    shell:
        "printf '%s\\n' {params.config:q} > {output} 2> {log}"


rule dossier:
    input:
        claims=f"{RESULTS}/{{paper}}/claims.csv",
        compute=rules.compute_accounting.output,
        config=rules.resolved_config.output,
        paper_config="config/paper.yaml",
    output:
        report(
            f"{RESULTS}/{{paper}}/REPRODUCIBILITY.md",
            caption="../report/dossier.rst",
            category="{paper}",
            subcategory="dossier",
        ),
    log:
        f"{RESULTS}/logs/dossier/{{paper}}.log",
    conda:
        ENV
    params:
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),
        code=module_digest("repro.pipeline.dossier"),
    shell:
        "python -m repro report dossier --paper {wildcards.paper} --results-dir {params.results} "
        "--config {input.config} --paper-config {input.paper_config} --out {output} > {log} 2>&1"


rule run_summary:
    input:
        scorecard=rules.scorecard.output.csv,
        compute=rules.compute_accounting.output,
    output:
        report(f"{RESULTS}/SUMMARY.md", caption="../report/summary.rst", category="Scorecard"),
    log:
        f"{RESULTS}/logs/summary.log",
    conda:
        ENV
    params:
        results=lambda wildcards, output: os.path.dirname(output[0]),
        papers=" ".join(PAPERS),
        code=module_digest("repro.pipeline.run_summary"),
    shell:
        "python -m repro report summary --results-dir {params.results} --papers {params.papers} --out {output} "
        "> {log} 2>&1"
