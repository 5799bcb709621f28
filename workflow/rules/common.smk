# Helpers shared by every paper's rules: paths, scale lookup, run specs and the
# one notebook pattern (notebooks/<paper>/<item>.py -> papermill -> figure/table).
import json
import os
import shlex
import sys

from repro import jobserver
from repro.pipeline.captions import item_caption
from repro.pipeline.claims import claim_inputs
from repro.pipeline.code_digest import claims_digest, module_digest, source_digest
from repro.pipeline.rebuild import keep_command, prepare_jobs
from repro.pipeline.seeds import results_name
from repro.pipeline.configcheck import figure_seeds

SCALE = config["scale"]
# One results tree per scale (and seed offset), so that a smoke run never replaces the outputs of a
# laptop run, nor a run with shifted seeds those of the unshifted one.
RESULTS = f"results/{results_name(SCALE, config['seed_offset'])}"
# Jobs run `python -m repro` with this interpreter, and a job that finds a damaged file prints the
# command that makes it again: this one, with --forcerun (repro.pipeline.rebuild).
if workflow.is_main_process:
    prepare_jobs(sys.argv)


# When jobs start (not for a dry run): the command is kept in the tree, for `python -m repro verify`.
onstart:
    keep_command(RESULTS)


# Every job's `python -m repro` command goes to a warm process that imported torch, pandas and
# papermill once and forks a child per job (repro.jobserver); the jobs inherit this variable.
if config["job_server"]:
    os.environ[jobserver.ENV_VAR] = "1"
else:
    os.environ.pop(jobserver.ENV_VAR, None)

# glibc hands freed blocks above an adaptive size back to the kernel and maps them afresh, so a job
# that allocates large tensors step after step pays page faults (4.8 million in one ablation job).
# Kept in the heap they cost none: the same results byte for byte, the ablation and cross-paper
# evaluation jobs 9% and 28% faster alone, training unchanged, the whole DAG about the same
# (docs/performance.md). Every job inherits this; a value the user set is kept.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=1073741824"
os.environ.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)

ENV = "../../environment.yml"
# A timing job holds every core, so that no other job runs beside it and its measurement is of the
# code, not of the neighbours; at smoke scale nothing is judged, and the DAG runs faster without.
TIMING_THREADS = 1 if SCALE == "smoke" else workflow.cores
# Scheduling priorities (Snakemake starts the ready jobs of higher priority first; the default is 0).
# A job that holds every core can start only when every core is free, which, once other jobs run,
# happens only when two of them end together: so the timing jobs that others wait for need no
# input and run first, while the machine is still free. Then the data that long chains of jobs
# wait for, then the long training jobs, and the many short jobs fill the gaps at the end.
# Snakemake picks the set of ready jobs with the largest sum of priorities that fits the free cores,
# so a timing job's priority must exceed the sum of a full machine of other jobs.
PRIORITY_TIMING = 1000  # the jobs that hold every core
PRIORITY_DATA = 10  # the datasets that the training jobs read (above two training jobs together)
PRIORITY_LONG = 1  # training jobs of several minutes each


wildcard_constraints:
    seed=r"\d+",
    paper="|".join(PAPERS),
    item=r"(fig|table)\d\d",
    variant=r"[a-z0-9_]+",


# -- notebooks ---------------------------------------------------------------------
# Each paper's .smk registers its items: the tidy CSVs a notebook reads and the
# parameters it receives. The two generic rules below run every registered item.
NOTEBOOKS = {}


def register_notebook(paper, item, inputs, params=None, source=None):
    """Item `item` of `paper` is made by notebooks/<paper>/<source or item>.py from `inputs`; items
    that differ only in their settings share one source, which reads the item it makes."""
    NOTEBOOKS[(paper, item)] = {"inputs": list(inputs), "params": dict(params or {}), "source": source or item}


def notebook_source(wildcards):
    return f"notebooks/{wildcards.paper}/{NOTEBOOKS[(wildcards.paper, wildcards.item)]['source']}.py"


def notebook_code(wildcards):
    """The digest of the repro modules the notebook imports (repro.pipeline.code_digest)."""
    return source_digest(notebook_source(wildcards))


def notebook_inputs(wildcards):
    return NOTEBOOKS[(wildcards.paper, wildcards.item)]["inputs"]


def notebook_params(wildcards):
    """`--param key=value` arguments for the notebook runner (JSON values)."""
    entry = NOTEBOOKS[(wildcards.paper, wildcards.item)]
    params = dict(entry["params"], inputs=entry["inputs"])
    return " ".join(shlex.quote(f"--param={key}={json.dumps(value, sort_keys=True)}") for key, value in params.items())


def item_outputs(paper, item):
    kind, suffixes = ("figures", ("png", "pdf")) if item.startswith("fig") else ("tables", ("csv", "md"))
    files = [f"{RESULTS}/{paper}/{kind}/{item}.{suffix}" for suffix in suffixes]
    return files + [f"{RESULTS}/{paper}/notebooks/{item}.ipynb", f"{RESULTS}/{paper}/notebooks/{item}.html"]


def report_entries():
    """The report's copy of every figure (png) and table (csv), see rule report_entry."""
    entries = []
    for paper, item in sorted(NOTEBOOKS):
        entries.append(f"{RESULTS}/{paper}/report/{item}.{'png' if item.startswith('fig') else 'csv'}")
    return entries


def all_notebook_outputs():
    return [path for paper, item in sorted(NOTEBOOKS) for path in item_outputs(paper, item)]


def mirror_option(data_section):
    """`--mirror DIR` when a data section's `mirror` names a local copy of the hub's files, else nothing."""
    mirror = data_section.get("mirror")
    return f"--mirror {shlex.quote(str(mirror))}" if mirror else ""


# -- training runs -----------------------------------------------------------------
def seeds(paper):
    return config[paper]["seeds"]


def claims_inputs(wildcards):
    return [os.path.normpath(f"{RESULTS}/{wildcards.paper}/{name}") for name in claim_inputs(wildcards.paper)]


def figure_runs(paper, item):
    """Final weights of every (variant, seed) run a figure or table of `paper` uses."""
    section = config[paper]
    return [
        f"{RESULTS}/{paper}/runs/{variant}/seed{seed}/model.safetensors"
        for variant in section["figures"][item]["variants"]
        for seed in figure_seeds(section, item, variant)
    ]


def run_dirs(wildcards, input):
    """The run directories of a list of run outputs, space-separated."""
    return " ".join(sorted({os.path.dirname(path) for path in input}))


def results_root(wildcards, output):
    """RESULTS, read back from an output path RESULTS/<paper>/<kind>/<file>."""
    return os.path.dirname(os.path.dirname(os.path.dirname(output[0])))


def parent_dir(wildcards, output):
    return os.path.dirname(output[0])


def gather_groups(pairs):
    """`--group OUT IN ...` arguments of `python -m repro gather`, from (output, inputs) pairs."""
    return " ".join("--group " + " ".join(shlex.quote(path) for path in [out, *inputs]) for out, inputs in pairs)


def paper_claims_file(wildcards):
    """The paper's judged claims (their verdicts go in the caption)."""
    return [f"{RESULTS}/{wildcards.paper}/claims.csv"]


def report_caption(wildcards, input):
    """The report caption of an item: its description, the scale and this run's verdicts."""
    return item_caption(
        wildcards.paper, wildcards.item, SCALE, input.claims[0], os.path.join(workflow.basedir, "workflow", "report")
    )


def item_path(paper, item, suffix=None):
    """A file beside an item's figure (png) or table (csv); by default that figure or table."""
    kind, main = ("figures", "png") if item.startswith("fig") else ("tables", "csv")
    return f"{RESULTS}/{paper}/{kind}/{item}.{suffix or main}"


def item_file(wildcards):
    """The figure (png) or table (csv) an item's notebook wrote."""
    return item_path(wildcards.paper, wildcards.item)


def paper_items(paper):
    return sorted(item for owner, item in NOTEBOOKS if owner == paper)


def lineage_cards(paper=None):
    """The lineage cards of `paper`'s items, or of every item."""
    return [
        item_path(owner, item, "lineage.json") for owner, item in sorted(NOTEBOOKS) if paper is None or owner == paper
    ]


def lineage_card_arguments(paper):
    """`--card ITEM TARGET OUT` for each item of `paper` (python -m repro report lineage)."""
    return " ".join(
        "--card "
        + " ".join(shlex.quote(arg) for arg in (item, item_path(paper, item), item_path(paper, item, "lineage.json")))
        for item in paper_items(paper)
    )


def lm_split_files(wildcards):
    """The train and valid token files of the decoders of `wildcards.paper` (rule lm_reference_levels)."""
    token_file = {"simplified_blocks": sb_token_file, "param_allocation": pa_token_file}[wildcards.paper]
    return {"train": token_file("train"), "valid": token_file("valid")}


def lm_heldout_options(wildcards):
    """`--seq-len L --heldout-chunks n` of the held-out chunks the decoders of `wildcards.paper` are evaluated
    on, for rule lm_reference_levels; simplified_blocks' at its base length, param_allocation's teachers'."""
    section = config[wildcards.paper]
    lm = section["lm"] if wildcards.paper == "param_allocation" else section
    return f"--seq-len {lm['model']['max_seq_len']} --heldout-chunks {lm['heldout_chunks']}"
