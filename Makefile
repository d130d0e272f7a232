# kubectl-ssa. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/kubectl-ssa/kubectl-ssa/cmd.version=$(VERSION) -X github.com/kubectl-ssa/kubectl-ssa/cmd.gitCommit=$(COMMIT)

# The test bed: a real kube-apiserver + etcd + kube-controller-manager built
# from k8s.io/kubernetes. The cold build takes about 10 minutes on 2 cores;
# the binary lives in a cache directory outside the checkout and Go's build
# cache makes a rebuild a no-op of a few seconds.
K8S_VERSION := v1.37.1
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubectl-ssa
TESTBED := $(CACHE_DIR)/testbed-$(K8S_VERSION)/kube-apiserver
TESTBED_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CACHE_DIR)/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
E2E_TIMEOUT ?= 45m
# Extra arguments for the demo, e.g. DEMO_ARGS=--keep to leave the server up.
DEMO_ARGS ?=

.PHONY: help build test test-unit test-e2e testbed testbed-path demo bench lint tidy-check clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## Build bin/kubectl-ssa
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-ssa .

test: test-unit test-e2e ## Unit and end-to-end tests (builds the test bed on first use)

test-unit: ## Unit tests of the plugin module
	$(GO) test -count=1 ./...

test-e2e: testbed ## End-to-end tests against a real kube-apiserver
	cd test && SSA_TESTBED_BIN=$(TESTBED) $(GO) test -count=1 -timeout $(E2E_TIMEOUT) ./...

testbed: ## Build (or refresh) the test bed apiserver in the cache directory
	@mkdir -p $(dir $(TESTBED))
	@if [ ! -x $(TESTBED) ]; then echo "building the test bed kube-apiserver $(K8S_VERSION) into $(TESTBED) (about 10 minutes the first time)"; fi
	cd test && $(GO) build -ldflags '$(TESTBED_LDFLAGS)' -o $(TESTBED) ./cmd/kube-apiserver

testbed-path:
	@echo $(TESTBED)

demo: build testbed ## Start a local API server, create example objects, run every subcommand
	cd test && $(GO) run ./cmd/demo --testbed $(TESTBED) --plugin ../bin/kubectl-ssa $(DEMO_ARGS)

bench: build testbed ## Go benchmarks and the bench/ scripts against the local server
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/who-owns.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/explain-conflict.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/migrate.sh
	PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/output-memory.sh

lint: $(GOLANGCI_LINT) ## golangci-lint (pinned) and go mod tidy check
	$(GOLANGCI_LINT) run ./...
	cd test && $(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	@mkdir -p $(dir $@)
	GOBIN=$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(dir $@)golangci-lint $@

tidy-check: ## Fail if go mod tidy would change go.mod/go.sum
	$(GO) mod tidy && git diff --exit-code go.mod go.sum
	cd test && $(GO) mod tidy && git diff --exit-code go.mod go.sum

clean: ## Remove built binaries (the test bed cache stays; rm -rf $(CACHE_DIR) removes it)
	rm -rf bin dist
