# PackageSync. Every target runs with Node >= 24 first on PATH (hack/ensure-node.sh installs it into
# .tools/ when the machine's node is older) and installs what it needs by itself.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NODE_BIN := $(shell hack/ensure-node.sh)
export PATH := $(NODE_BIN):$(PATH)
KUBECTL := $(shell hack/build-cluster.sh paths | sed -n 's/^KUBE_BIN_DIR=//p')/kubectl
CLUSTER_KUBECONFIG := $(CURDIR)/.cluster/kubeconfig

.PHONY: help deps system-deps node-deps build-cluster cluster-up cluster-down cluster-status kubectl \
	lint typecheck ui test test-unit test-e2e demo controller crds bench bench-quick bench-drift bench-rollout bench-monorepo bench-soak bench-ui bench-notify screenshots clean image image-reproducible test-image install-yaml

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

system-deps: ## Debian packages the tests need (sshd, git, openssl), only when missing
	@hack/install-system-deps.sh

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

node-deps: node_modules/.package-lock.json

ui: node-deps ## build the web UI (web/) into dist/ui with esbuild: `packagesync ui` serves it
	npm run --silent build:ui

deps: system-deps node-deps build-cluster ## everything make test needs

build-cluster: ## build etcd, kube-apiserver, controller-manager, scheduler, kubectl, kwok, kustomize, helm (cached by version)
	@hack/build-cluster.sh all

cluster-up: ## start the local control plane; writes .cluster/kubeconfig
	@hack/cluster.sh up

cluster-down: ## stop the local control plane and remove its data
	@hack/cluster.sh down

cluster-status:
	@hack/cluster.sh status

kubectl: ## run the kubectl built here against the local cluster: make kubectl ARGS="get pks -A"
	@KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} $(KUBECTL) $(ARGS)

image: node-deps ## build the controller image without Docker into .image/ (OCI + docker archives), twice: same digest
	@hack/build-image.sh build

image-reproducible: node-deps ## make image, and the Debian base twice too, without its cache (slow)
	@hack/build-image.sh reproducible

test-image: node-deps # the image the e2e runs with runc: rebuilt only when an input changed
	@hack/build-image.sh ensure >/dev/null

install-yaml: build-cluster ## regenerate deploy/install.yaml (deploy/ in one file) with kubectl kustomize
	@hack/generate-install.sh

crds: node-deps ## regenerate crds/ from the zod schema in src/api
	node hack/generate-crds.ts

lint: node-deps ## eslint + prettier + the layer rules of src/ (.dependency-cruiser.mjs)
	npx eslint .
	npx prettier --check .
	npx depcruise src --config .dependency-cruiser.mjs

typecheck: node-deps
	npx tsc --noEmit
	npx tsc --noEmit -p web

test-unit: node-deps ## pure logic and real git servers
	npx vitest run --project unit

test-e2e: deps test-image ui ## against the real control plane (started here when PACKAGESYNC_TEST_KUBECONFIG is unset)
	npx vitest run --project e2e

screenshots: deps test-image ui ## the browser tests, writing their screenshots into docs/ (a test run writes them to .e2e/screenshots/)
	PACKAGESYNC_DOCS_SCREENSHOTS=1 npx vitest run --project e2e e2e/ui.test.ts e2e/ui-package.test.ts e2e/ui-rollout.test.ts e2e/ui-in-cluster.test.ts

test: deps test-image ui lint typecheck ## the whole suite; ends with "N passed, N failed"
	@mkdir -p .e2e
	@rc=0; npx vitest run --reporter=default --reporter=json --outputFile.json=.e2e/results.json || rc=$$?; \
	  node hack/test-summary.ts .e2e/results.json; exit $$rc

demo: deps ui ## the main job on a local control plane (or $$KUBECONFIG with DEMO_USE_KUBECONFIG=1)
	node hack/demo.ts

controller: node-deps ## run the controller against $$KUBECONFIG (default: the local cluster)
	KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} node src/main.ts controller

bench: deps ## benchmarks vs Flux and the API server's floor on a control plane of their own; writes bench/RESULTS.md
	node bench/run.ts

bench-monorepo: node-deps system-deps ## one package's fetch from a large generated monorepo vs a full clone (no cluster); writes bench/RESULTS-monorepo.md
	node bench/monorepo.ts

bench-quick: deps ## the same at small sizes (minutes): checks the harness, not the issue's shapes
	node bench/run.ts --quick --out bench/.work/RESULTS-quick.md

bench-drift: deps ## self-heal latency: kubectl edit → corrected, p50/p95 over N edits (bench/drift.ts, < 2 min)
	node bench/drift.ts

bench-rollout: deps ## issue 31: a PackageSyncSet over N targets in 4 waves (0 bake) vs N PackageSyncs: time and RSS; ARGS="--targets 20"
	node bench/rollout.ts $(ARGS)

bench-notify: deps ## issue 29: a fleet with a webhook Notifier on every unit vs without: time to Ready, delivery p99, outbox bound; ARGS="--units 50"
	node bench/notify.ts $(ARGS)

bench-ui: deps ## the web UI at 10,000 PackageSyncs (issue 28): first page, first paint, RSS with 20 browsers, SSE latency; ARGS="--count 300 --browsers 5"
	node bench/ui-fleet.ts $(ARGS)

bench-soak: deps ## churn soak (issue 18): 500 units, commits, creates/deletes, SIGKILL every 10 min, 1 h; ARGS="--duration 8m --units 100 --kubeconfig .cluster/kubeconfig"
	node bench/soak.ts $(ARGS)

clean: cluster-down
	rm -rf .e2e node_modules .tools .image
