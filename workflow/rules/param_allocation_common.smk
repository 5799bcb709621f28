# Helpers of workflow/rules/param_allocation.smk (Snakemake lint wants functions and rules apart).
from repro.papers.param_allocation import specs as pa_specs

PA = "param_allocation"
PA_DIR = f"{RESULTS}/{PA}"
PA_CFG = config[PA]
# data.source hub (paper scale): the teachers and Fig 5 decoders read WikiText-103 token files written
# by param_allocation_hub_tokens instead of the shared offline corpus's (rule code_tokens).
PA_DATA_CFG = PA_CFG.get("data", {"source": "offline"})
PA_HUB = PA_DATA_CFG["source"] == "hub"
PA_HUB_TOKENS = f"{PA_DIR}/data/hub_tokens"


def pa_spec(step):
    """The JSON settings of one step (see repro.papers.param_allocation.specs)."""
    return json.dumps(pa_specs.step_spec(config, step), sort_keys=True)


def pa_bound_spec(wildcards):
    return json.dumps(pa_specs.bound_spec(config), sort_keys=True)


def pa_sweep_spec(wildcards):
    return pa_spec("sweep")


def pa_saturation_spec(wildcards):
    return pa_spec("saturation")


def pa_jacobian_spec(wildcards):
    return pa_spec("jacobian")


def pa_low_rank_spec(wildcards):
    return pa_spec("low_rank")


def pa_runs_dir(experiment):
    """The run directories of one seed of an experiment (sweep, saturation): RESULTS/param_allocation/runs/<experiment>/seed<k>."""
    return lambda wildcards: f"{PA_DIR}/runs/{experiment}/seed{wildcards.seed}"


# Per-seed CSVs, in the (sorted) order they are stacked in by `python -m repro gather`.
def pa_sweep_files(wildcards):
    return sorted(f"{PA_DIR}/data/sweep/seed{seed}.csv" for seed in PA_CFG["sweep"]["seeds"])


def pa_saturation_files(wildcards):
    return sorted(f"{PA_DIR}/data/saturation/seed{seed}.csv" for seed in PA_CFG["saturation"]["seeds"])


# -- trained decoders (Figs 4, 5, 6, 9, 10) ------------------------------------------------------------
PA_TEACHERS = f"{PA_DIR}/runs/teacher"


def pa_teacher_spec(wildcards):
    return json.dumps(pa_specs.teacher_spec(config, wildcards.seed), sort_keys=True)


def pa_teacher_analysis_spec(wildcards):
    return json.dumps(pa_specs.teacher_analysis_spec(config), sort_keys=True)


def pa_decoders_spec(wildcards):
    return pa_spec("decoders")


def pa_student_runs(wildcards):
    return f"{PA_DIR}/runs/students/seed{wildcards.seed}"


def pa_decoder_runs(wildcards):
    return f"{PA_DIR}/runs/decoders/seed{wildcards.seed}"


def pa_teacher_dir(wildcards, input):
    return os.path.dirname(input.model)


def pa_lm_gather_inputs(wildcards):
    """Per-seed CSVs of the teacher analyses and the decoder grid, by gathered file (sorted)."""
    teacher_seeds, decoder_seeds = PA_CFG["lm"]["seeds"], PA_CFG["decoders"]["seeds"]
    return {
        "replacement": sorted(f"{PA_DIR}/data/teacher/replacement_seed{s}.csv" for s in teacher_seeds),
        "positions": sorted(f"{PA_DIR}/data/teacher/positions_seed{s}.csv" for s in teacher_seeds),
        "logits": sorted(f"{PA_DIR}/data/teacher/logits_seed{s}.csv" for s in teacher_seeds),
        "decoders": sorted(f"{PA_DIR}/data/decoders/seed{s}.csv" for s in decoder_seeds),
        "curves": sorted(f"{PA_DIR}/data/decoders/curves_seed{s}.csv" for s in decoder_seeds),
    }


def pa_gather_groups(wildcards, input, output):
    """One `--group OUT IN ...` per gathered file."""
    names = ("replacement", "positions", "logits", "decoders", "curves")
    return gather_groups((getattr(output, name), getattr(input, name)) for name in names)


def pa_token_file(split):
    """The token file of one split (train, valid) that the trained decoders read."""
    return f"{PA_HUB_TOKENS}/{split}.npz" if PA_HUB else getattr(rules.code_tokens.output, split)
