# One-command entry points. Variables can be overridden: `make smoke CORES=2`, `make test PYTEST_ARGS=-x PYTEST_WORKERS=0`.
#
#   make test       build .venv if needed, run the test suite
#   make smoke      the whole DAG at smoke scale (minutes, CPU)
#   make reproduce  the whole DAG at the default (laptop) scale, then the HTML report
#   make lint       ruff (lint, format), snakefmt, snakemake --lint
#   make format     apply ruff's and snakefmt's formatting
#   make test-cluster  the smoke DAG through a local single-node SLURM (root; minutes)
#   make bench-gpu  training throughput of each paper's paper-scale shapes on one GPU, fp32 and bf16

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
# Install marker: redone only when pyproject.toml changes.
STAMP := $(VENV)/.installed
# torch goes in first, on its own, so that pip takes the CPU wheel of this exact version (found on
# local disk here) and the project install below sees the pin already met. Left to resolve torch
# itself, pip would download the multi-GB CUDA build from PyPI. Elsewhere, point pip at a CPU wheel
# with TORCH_PIP_ARGS (for example an --index-url of CPU builds).
TORCH := torch==2.13.0
TORCH_PIP_ARGS ?=
# The rest of the pins go through uv, which installs the same versions as pip (same pins, same
# resolution) in seconds where pip takes about a minute of the reproduce budget; pip stays the
# fallback where uv cannot be installed or cannot reach an index. uv keeps the torch already there.
UV := uv==0.13.9
CORES ?= all
# Snakemake also finds profiles/default by itself (next to the root Snakefile), so a bare
# `snakemake --cores N` runs with the same settings; named here so PROFILE=... can replace it.
PROFILE ?= profiles/default
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=
# Test workers (pytest-xdist; one module per worker, so that a module's fixtures run once): 2 cut
# the suite's time on two cores by 10-25%; PYTEST_WORKERS=0 runs it in this one process.
PYTEST_WORKERS ?= 2

# Rules call `python -m repro ...`: put the venv first on PATH so that `python` is this one.
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: install test smoke reproduce lint format test-cluster bench-gpu

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install $(TORCH_PIP_ARGS) '$(TORCH)'
	$(PY) -m pip install -q '$(UV)' && $(VENV)/bin/uv pip install --python $(PY) -e '.[test]' \
		|| $(PY) -m pip install -e '.[test]'
	touch $@

test: $(STAMP)
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

smoke: $(STAMP)
	$(SNAKEMAKE) --workflow-profile $(PROFILE) --cores $(CORES) --configfile config/smoke.yaml $(SNAKEMAKE_ARGS)

reproduce: $(STAMP)
	$(SNAKEMAKE) --workflow-profile $(PROFILE) --cores $(CORES) $(SNAKEMAKE_ARGS)
	$(SNAKEMAKE) --workflow-profile $(PROFILE) --report results/laptop/report.html

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/snakefmt --check Snakefile workflow
	$(SNAKEMAKE) --workflow-profile $(PROFILE) --lint

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
	$(VENV)/bin/snakefmt Snakefile workflow

# The smoke DAG through a real single-node SLURM started on this machine (root: installs slurm-wlm and
# munge with apt-get), compared with a local run; outside `make test`. TARGETS="..." limits the DAG.
test-cluster: $(STAMP)
	VENV=$(abspath $(VENV)) flock /tmp/repro-heavy.lock tests/cluster/run_slurm_smoke.sh

# Training throughput of each paper's two most-trained paper-scale shapes on one GPU, in fp32 and bf16
# autocast, with peak GPU memory and the share of the GPU's measured matmul peak; then simplified_blocks'
# blocks timed at paper scale as its throughput rule times them (docs/paper-scale.md). It needs no
# .venv: any python3 whose torch is a CUDA build, with pyyaml, pandas, jsonschema and transformers, runs
# the code from src/. Not yet run on a GPU.
BENCH_GPU_DIR ?= results/bench
bench-gpu:
	PYTHONPATH=src$${PYTHONPATH:+:$$PYTHONPATH} $(PYTHON) -m repro bench --device cuda --precision fp32 bf16 \
		--config config/config.yaml config/paper.yaml --top-per-paper 2 --max-tokens 65536 \
		--steps 3 --rounds 3 --warmup 2 --out $(BENCH_GPU_DIR)/gpu_shapes.json
	PYTHONPATH=src$${PYTHONPATH:+:$$PYTHONPATH} $(PYTHON) -m repro simplified_blocks throughput --config config/config.yaml config/paper.yaml \
		--out-timings $(BENCH_GPU_DIR)/gpu_blocks_timings.csv --out-models $(BENCH_GPU_DIR)/gpu_blocks_models.csv
