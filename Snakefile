# The replication pipeline: every figure, table and claim of four papers.
#
#   snakemake --cores all                                 laptop scale (default)
#   snakemake --cores all --configfile config/smoke.yaml  smoke scale (CI)
#   snakemake --configfile config/paper.yaml ...          paper scale (GPU cluster)
#
# Layout and conventions: README.md and config/README.md.
import os

from snakemake.utils import min_version

from repro.papers import PAPERS
from repro.pipeline.configcheck import check_config, check_config_files, fill_defaults
from repro.pipeline.recovery import release_stale_locks
from repro.pipeline.seeds import shift_model_seeds

min_version("9.0")

# A run killed outright leaves Snakemake's lock behind; rerunning the same command clears it
# when no other instance is alive (repro.pipeline.recovery).
if workflow.is_main_process:
    release_stale_locks(os.getcwd())

# Snakemake's error for a YAML error in this file names neither the file nor the line.
check_config_files(["config/config.yaml"])


configfile: "config/config.yaml"


# Readable errors (key path and allowed values) before any job starts, then the schema's defaults
# filled in. The sources let the check read --config values as YAML and hold each scale file to
# its scale.
check_config(config, configfiles=workflow.configfiles, command_line=workflow.config_settings.config)
fill_defaults(config)
# seed_offset: every model seed shifted, results in results/<scale>-seeds+<k>/ (repro.pipeline.seeds).
config.update(shift_model_seeds(config, PAPERS))


include: "workflow/rules/common.smk"
include: "workflow/rules/notebooks.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/simplified_blocks.smk"
include: "workflow/rules/sixteen_heads.smk"
include: "workflow/rules/param_allocation.smk"
include: "workflow/rules/layer_diversity.smk"
include: "workflow/rules/cross_paper.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_notebook_outputs(),
        report_entries(),
        CODE_LEVELS,
        f"{RESULTS}/scorecard.csv",
        f"{RESULTS}/scorecard.md",
        lineage_cards(),
        f"{RESULTS}/compute.csv",
        f"{RESULTS}/SUMMARY.md",
        expand(f"{RESULTS}/{{paper}}/REPRODUCIBILITY.md", paper=PAPERS),
