# kubevec: every target creates what it needs itself (venv, Go-built control plane, helm),
# so `make demo` and `make test` work as the first commands on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/python -m pytest
PACKAGES := core controller backends inference query
export CHROMA_TELEMETRY_IMPL := none
export ANONYMIZED_TELEMETRY := False

##@ General

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

setup: $(STAMP) ## Create .venv and install kubevec with dev extras (idempotent).

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "Creating virtualenv in $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "Installing kubevec[dev] into $(VENV) (first run downloads wheels)"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	@touch $(STAMP)

controlplane: ## Build (or reuse) etcd, kube-apiserver, kube-controller-manager and kubectl.
	@bash tests/controlplane/build.sh >/dev/null

helm: ## Build (or reuse) helm from the Go module proxy.
	@bash charts/tools/build-helm.sh >/dev/null

weaviate: ## Build (or reuse) the Weaviate server the Weaviate backend is tested against.
	@bash tests/weaviate/build.sh >/dev/null

chart-docs: ## Regenerate charts/kubevec/README.md from values.yaml comments (helm-docs; a test checks it).
	@"$$(bash charts/tools/build-helm-docs.sh | tail -1)" --chart-search-root charts --skip-version-footer --log-level warning

lock: ## Regenerate deploy/requirements.lock (pip-compile with hashes, build backend, the bedrock, lancedb, weaviate and redis extras included) for the image.
	@test -x .venv-lock/bin/pip-compile || { $(PYTHON) -m venv .venv-lock && .venv-lock/bin/pip install --quiet pip-tools; }
	.venv-lock/bin/pip-compile --generate-hashes --strip-extras --no-emit-find-links --allow-unsafe --all-build-deps \
	  --extra bedrock --extra lancedb --extra weaviate --extra redis --quiet --output-file deploy/requirements.lock pyproject.toml
	@sed -i 's|^#    pip-compile .*|#    make lock   (pip-compile --generate-hashes --all-build-deps --extra bedrock --extra lancedb --extra weaviate --extra redis: every wheel the image installs, build backend included)|' deploy/requirements.lock

manifests: setup ## Regenerate deploy/kubevec.yaml from the chart (a test checks it is current).
	@$(BIN)/python charts/tools/plain_manifests.py "$$(bash charts/tools/build-helm.sh | tail -1)" > deploy/kubevec.yaml.new
	@mv deploy/kubevec.yaml.new deploy/kubevec.yaml

# The wheel lays the folders out as kubevec/<folder>; static tools (mypy, import-linter, editors) cannot follow
# the editable install's import hook, so they read the same layout from the symlinks committed in .typecheck/kubevec
# (a unit test keeps one per package; see docs/development.md).
lint: setup ## Run ruff (lint + format check) and the import-layer contracts.
	$(BIN)/ruff check $(PACKAGES) tests
	$(BIN)/ruff format --check $(PACKAGES) tests
	PYTHONPATH=.typecheck $(BIN)/lint-imports

format: setup ## Reformat code with ruff.
	$(BIN)/ruff format $(PACKAGES) tests
	$(BIN)/ruff check --fix $(PACKAGES) tests

typecheck: setup ## Run mypy --strict on the kubevec package (every folder of it).
	$(BIN)/mypy

docs: setup ## Build the documentation site (docs/, mkdocs-material, strict: a broken link fails) into .site/.
	@NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build -f - --site-dir .site < docs/mkdocs.yml
	@echo "Built the documentation site into .site/ (open .site/index.html)"

chart-lint: setup helm ## Lint the Helm chart and render every ci/*-values.yaml.
	$(PYTEST) tests/integration/test_chart.py

##@ Tests

test: setup controlplane helm weaviate lint typecheck ## Everything: lint, types, unit, integration, e2e.
	$(PYTEST) tests

test-unit: setup ## Fast, hermetic unit tests: no network, no processes (tests/unit/conftest.py refuses both), no real waits.
	$(PYTEST) tests/unit -m "not slow"

test-integration: setup helm weaviate ## Integration tests (real Chroma server, real embedder, helm).
	$(PYTEST) tests/integration

test-e2e: setup controlplane weaviate ## End-to-end tests against a real etcd + kube-apiserver.
	$(PYTEST) tests/e2e

bench: setup controlplane weaviate ## Benchmarks: embedder, backends, retrieval quality and latency, MCP access at scale.
	$(BIN)/python -m tests.bench

CRDS ?= ../shared/crds
QUERIES ?= $(CRDS)/queries.jsonl
bench-retrieval: setup ## Recall@1/@5, MRR, latency of the configured embedder/reranker (CRDS=dir QUERIES=file.jsonl).
	@test -f "$(QUERIES)" || { echo "No questions at $(QUERIES): make bench-retrieval CRDS=<CRD files or folder> QUERIES=<questions.jsonl>"; exit 2; }
	$(BIN)/kubevec bench retrieval --crds $(CRDS) --queries $(QUERIES)

bench-answers: setup controlplane ## Instance answers on public applications (tests/bench/apps): hit@k, MRR, facts, graph, latency.
	$(BIN)/python -m tests.bench.answers

bench-scale: setup controlplane ## Issue 50 at 100k objects (stand-in embedder, no naive baseline; KUBEVEC_BENCH_* override): controller, readers, JSON in bench-scale.json; then `kubevec index crds` over 2,000 CRDs, then the keyword index at 100,000 documents (built, opened, following writes), then what the instance ranking's own reads cost there.
	KUBEVEC_BENCH_OBJECTS=$${KUBEVEC_BENCH_OBJECTS:-100000} KUBEVEC_BENCH_EMBEDDER=$${KUBEVEC_BENCH_EMBEDDER:-standin} \
	KUBEVEC_BENCH_NAIVE=$${KUBEVEC_BENCH_NAIVE:-0} $(BIN)/python -m tests.bench.scale
	$(BIN)/python -m tests.bench.keyword_index
	$(BIN)/python -m tests.bench.read_costs

##@ Running

demo: setup controlplane ## Throwaway control plane + sample CRDs/objects + controller + example searches.
	$(BIN)/python -m tests.demo

run: setup ## Run the controller against $$KUBECONFIG (settings from KUBEVEC_* variables).
	$(BIN)/kubevec run

.PHONY: docs bench-retrieval bench-answers bench-scale lock chart-docs manifests help setup controlplane helm weaviate lint format typecheck chart-lint test test-unit test-integration test-e2e bench demo run
