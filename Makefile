# kubectl-ssa. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null)
# The commit's date, not the clock's, as .goreleaser.yaml stamps it: two
# builds of one commit are the same bytes.
BUILD_DATE ?= $(shell TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS := -s -w -X github.com/kubectl-ssa/kubectl-ssa/cmd.version=$(VERSION) -X github.com/kubectl-ssa/kubectl-ssa/cmd.gitCommit=$(COMMIT) -X github.com/kubectl-ssa/kubectl-ssa/cmd.buildDate=$(BUILD_DATE)

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
# Release tools, built once into the cache directory like golangci-lint.
# goreleaser v2.16.0 is the newest v2 that builds here: v2.17.0 needs a
# module the proxy refuses (go.digitalxero.dev/go-msix) and v2.18 needs Go
# 1.27. krew's version is the one test/go.mod pins for its validator.
GORELEASER_VERSION := v2.16.0
GORELEASER := $(CACHE_DIR)/tools/goreleaser-$(GORELEASER_VERSION)
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(CACHE_DIR)/tools/actionlint-$(ACTIONLINT_VERSION)
KREW_VERSION := $(shell awk '$$1 == "sigs.k8s.io/krew" { print $$2 }' test/go.mod)
KREW := $(CACHE_DIR)/tools/krew-$(KREW_VERSION)
# crane pushes the image; its version is the go-containerregistry that
# hack/image builds with (go.mod).
CRANE_VERSION := $(shell awk '$$1 == "github.com/google/go-containerregistry" { print $$2 }' go.mod)
CRANE := $(CACHE_DIR)/tools/crane-$(CRANE_VERSION)
E2E_TIMEOUT ?= 45m
# Extra arguments for the demo, e.g. DEMO_ARGS=--keep to leave the server up.
DEMO_ARGS ?=

.PHONY: help build image image-push schemas test vet test-unit test-e2e test-versions testbed testdeps testbed-path defaults demo bench lint tidy-check clean release-snapshot release krew-manifest release-tools actionlint

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

# Static binaries, as released (.goreleaser.yaml): no dynamic loader or libc
# at start-up, 5 MiB less resident memory and about 2 ms less CPU a run.
build: ## Build bin/kubectl-ssa and its companion bin/ssa-admission-eval (admission policies' CEL), static as released
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-ssa .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/ssa-admission-eval ./cmd/ssa-admission-eval

# The container image the monitor's chart runs (deploy/, docs/monitor-deploy.md),
# without a Docker daemon: each platform's static binary on an empty base,
# non-root, as an OCI image layout in dist/image whose digest is printed.
# Every time in it is the commit's, so a commit built twice is one digest.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
image: ## Build the container image (static kubectl-ssa, empty base, uid 65532) into dist/image, an OCI layout; prints its digest
	rm -rf dist/image dist/image-bin
	@set -e; for p in $(IMAGE_PLATFORMS); do \
		echo "building kubectl-ssa for $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/image-bin/$${p/\//_}/kubectl-ssa .; \
	done
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/image -o dist/image -version $(VERSION) -revision $(COMMIT) \
		$(foreach p,$(IMAGE_PLATFORMS),$(p)=dist/image-bin/$(subst /,_,$(p))/kubectl-ssa) > dist/image.digest
	@echo "dist/image: $$(cat dist/image.digest)"

# IMAGE=registry/repository:tag. With REGISTRY_USER and REGISTRY_PASSWORD
# set (the release workflow), crane logs in to IMAGE's registry first.
image-push: $(CRANE) ## Push dist/image (make image) to IMAGE=registry/repository:tag with crane
	@test -n "$(IMAGE)" || { echo "make image-push: set IMAGE=registry/repository:tag"; exit 1; }
	@test -f dist/image/index.json || { echo "make image-push: no dist/image: run make image first"; exit 1; }
	@if [ -n "$$REGISTRY_PASSWORD" ]; then printf '%s' "$$REGISTRY_PASSWORD" | $(CRANE) auth login "$(firstword $(subst /, ,$(IMAGE)))" -u "$$REGISTRY_USER" --password-stdin; fi
	$(CRANE) push dist/image $(IMAGE)

schemas: ## Write the JSON Schema of every report into docs/schema (from the report types)
	$(GO) run ./hack/jsonschema docs/schema

test: vet lint tidy-check test-unit test-e2e ## Vet, lint, tidy check, unit tests with -race, end-to-end tests (builds the test bed on first use)

vet: ## go vet, both modules
	$(GO) vet ./...
	cd test && $(GO) vet ./...

# RUN= selects tests by go test's -run regexp, PKG= the packages
# (make test-unit PKG=./pkg/audit RUN=TestFix; make test-e2e RUN=TestDiff).
RUN ?=
PKG ?= ./...
RUN_FLAG = $(if $(RUN),-run '$(RUN)')

test-unit: ## Unit tests of the plugin module, with the race detector (RUN=regexp, PKG=./pkg/x)
	$(GO) test -race -count=1 $(RUN_FLAG) $(PKG)

test-e2e: testbed testdeps ## End-to-end tests against a real kube-apiserver (RUN=regexp)
	cd test && SSA_TESTBED_BIN=$(TESTBED) $(GO) test -count=1 -timeout $(E2E_TIMEOUT) $(RUN_FLAG) ./...

# The other minors users run: test beds built by hack/testbed-version.sh
# into the cache directory (about 10 minutes each the first time), and
# the e2e tests whose answers must equal the apiserver's.
TEST_VERSIONS ?= v1.34.4 v1.35.4 v1.36.3 $(K8S_VERSION)
FIDELITY_TESTS ?= ^(TestExplainConflictCorpus|TestExplainConflictKubectlSequence|TestExplainConflictScaleSubresource|TestExplainConflictDefaults|TestDiffCorpus|TestDiffEveryKind|TestDiffSeeded|TestDiffCoversEveryKind|TestAdmissionBuiltinPlugins|TestAdmissionPodSecurity|TestAdmissionNamespaceRelabelledInTheInput|TestAdmissionPoliciesEvaluated|TestAdmissionWebhookMatchConditions|TestNamespaceEarlierInTheInput|TestEmptiedContainerAfterApply)$$

test-versions: ## The fidelity e2e tests (explain-conflict and diff against the server's dry run) on each of TEST_VERSIONS (1.34-1.37)
	@set -e; for v in $(TEST_VERSIONS); do \
		bin=$(CACHE_DIR)/testbed-$$v/kube-apiserver; \
		if [ "$$v" = "$(K8S_VERSION)" ]; then $(MAKE) --no-print-directory testbed; \
		elif [ ! -x $$bin ]; then echo "building the test bed $$v into $$bin (about 10 minutes the first time)"; hack/testbed-version.sh $$v $$bin; fi; \
		echo "== Kubernetes $$v"; \
		(cd test && SSA_TESTBED_BIN=$$bin $(GO) test -count=1 -timeout $(E2E_TIMEOUT) -run '$(FIDELITY_TESTS)' ./e2e/); \
	done

testbed: ## Build (or refresh) the test bed apiserver in the cache directory
	@mkdir -p $(dir $(TESTBED))
	@if [ ! -x $(TESTBED) ]; then echo "building the test bed kube-apiserver $(K8S_VERSION) into $(TESTBED) (about 10 minutes the first time)"; fi
	cd test && $(GO) build -ldflags '$(TESTBED_LDFLAGS)' -o $(TESTBED) ./cmd/kube-apiserver

testdeps: ## Install Chromium and Prometheus (promtool) from Debian's packages when missing (the e2e tests drive them)
	hack/testdeps.sh

testbed-path:
	@echo $(TESTBED)

defaults: ## Regenerate pkg/defaults/builtin.json from k8s.io/kubernetes' defaulting (after a Kubernetes bump)
	cd test && $(GO) run ./cmd/gendefaults -o ../pkg/defaults/builtin.json

demo: build testbed ## Start a local API server, create example objects, run every subcommand
	cd test && $(GO) run ./cmd/demo --testbed $(TESTBED) --plugin ../bin/kubectl-ssa $(DEMO_ARGS)

bench: build testbed ## Go benchmarks and the bench/ scripts against the local server
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/floor.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/who-owns.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/explain-conflict.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/diff.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/migrate.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/audit.sh
	PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/output-memory.sh
	bench/html.sh
	TESTBED=$(TESTBED) PLUGIN=$(CURDIR)/bin/kubectl-ssa bench/monitor.sh

lint: $(GOLANGCI_LINT) ## golangci-lint (pinned), both modules
	$(GOLANGCI_LINT) run ./...
	cd test && $(GOLANGCI_LINT) run ./...

# $(call go-install,BINARY,PACKAGE@VERSION) builds a pinned tool into $@.
define go-install
	@mkdir -p $(dir $@)
	GOBIN=$(dir $@) $(GO) install $(2)
	mv $(dir $@)$(1) $@
endef

$(GOLANGCI_LINT):
	$(call go-install,golangci-lint,github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION))

$(GORELEASER):
	$(call go-install,goreleaser,github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION))

$(CRANE):
	$(call go-install,crane,github.com/google/go-containerregistry/cmd/crane@$(CRANE_VERSION))

$(ACTIONLINT):
	$(call go-install,actionlint,github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION))

# `go install sigs.k8s.io/krew/cmd/krew@version` asks the proxy for the
# module's version list, which it refuses; building in the module's own
# directory uses krew's go.mod and go.sum just the same.
$(KREW):
	@mkdir -p $(dir $@)
	cd test && $(GO) mod download sigs.k8s.io/krew
	cd "$$(cd test && $(GO) list -m -f '{{.Dir}}' sigs.k8s.io/krew)" && $(GO) build -trimpath -o $@ ./cmd/krew

release-tools: $(GORELEASER) $(KREW) $(ACTIONLINT) $(CRANE) ## Build goreleaser, krew, actionlint and crane (pinned) into the cache directory and print their paths
	@echo GORELEASER=$(GORELEASER)
	@echo CRANE=$(CRANE)
	@echo KREW=$(KREW)
	@echo ACTIONLINT=$(ACTIONLINT)

actionlint: $(ACTIONLINT) ## Check .github/workflows with actionlint (pinned)
	$(ACTIONLINT)

# Snapshot: every archive, checksums.txt, the SBOMs and the krew manifest
# (dist/krew/ssa.yaml, filled from the archives), for the next version,
# without a tag and without publishing anything. The SBOMs need syft on
# the PATH (the workflows install it; it can't be built from the Go module
# proxy): without it they are skipped.
comma := ,
NO_SYFT := $(if $(shell command -v syft 2>/dev/null),,yes)
# goreleaser reads the commit and its date only if `git ls-remote --get-url`
# answers: a checkout without a remote (a local copy, a worktree) gets one
# in the environment, or the snapshot would stamp commit "none".
NO_REMOTE_ENV := $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=$(CURDIR))
release-snapshot: $(GORELEASER) ## Build the release archives, checksums, SBOMs and krew manifest into dist/ (publishes nothing)
	$(if $(NO_SYFT),@echo "release-snapshot: no syft on the PATH: no SBOMs")
	$(NO_REMOTE_ENV) $(GORELEASER) release --snapshot --clean --parallelism 1 --skip=publish,announce,sign$(if $(NO_SYFT),$(comma)sbom)
	$(GO) run ./hack/krew-manifest -dist dist -o dist/krew/ssa.yaml

# A release, step by step (what the release workflow does on a tag):
#   1. git tag -a vX.Y.Z -m vX.Y.Z && git push origin vX.Y.Z
#   2. .github/workflows/release.yml runs `make release` with GITHUB_TOKEN:
#      goreleaser publishes the GitHub release (archives, checksums.txt);
#      dist/krew/ssa.yaml is filled from those archives and attached;
#      make image and make image-push publish the container image to
#      ghcr.io (its digest, dist/image.digest, attached to the release);
#      krew-release-bot opens the krew-index pull request from .krew.yaml;
#      a pull request updates krew-manifest.yaml to the release.
# Run by hand only to redo a failed workflow run, on the tag's commit.
release: $(GORELEASER) ## On a tag (the release workflow): publish the GitHub release, write dist/krew/ssa.yaml
	@git describe --exact-match --tags HEAD >/dev/null 2>&1 || { echo "make release: HEAD has no tag; tag it (git tag -a vX.Y.Z) and push the tag: the release workflow runs this"; exit 1; }
	@test -n "$$GITHUB_TOKEN" || { echo "make release: GITHUB_TOKEN is not set"; exit 1; }
	$(GORELEASER) release --clean --parallelism 1
	$(GO) run ./hack/krew-manifest -dist dist -o dist/krew/ssa.yaml

krew-manifest: ## Rewrite krew-manifest.yaml from .krew.yaml and the archives in dist/
	$(GO) run ./hack/krew-manifest -dist dist -o krew-manifest.yaml

tidy-check: ## Fail if go mod tidy would change go.mod/go.sum (works without git too)
	@for d in . test test/helm; do \
		( cd $$d && cp go.mod go.mod.tidy-check && cp go.sum go.sum.tidy-check && $(GO) mod tidy && \
		  if cmp -s go.mod go.mod.tidy-check && cmp -s go.sum go.sum.tidy-check; then rm go.mod.tidy-check go.sum.tidy-check; \
		  else mv go.mod.tidy-check go.mod; mv go.sum.tidy-check go.sum; echo "go mod tidy changes $$d/go.mod or go.sum: run it and commit" >&2; exit 1; fi ) || exit 1; \
	done

clean: ## Remove built binaries (the test bed cache stays; rm -rf $(CACHE_DIR) removes it)
	rm -rf bin dist
