# debated — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

# Pinned tools, installed from the Go module proxy into ./bin.
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
GOLANGCI_LINT_VERSION      := v2.15.0
GRPCURL_VERSION            := v1.9.3

# `make run` settings; override on the command line or in the environment.
DEBATED_LISTEN      ?= localhost:50051
DEBATED_ADMIN_TOKEN ?= dev-admin-token
TEST_DATABASE_URL   ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
IMAGE               ?= debated:dev
export TEST_DATABASE_URL

GO_TEST_FLAGS ?= -count=1 -timeout=15m

# Variables whose values `make help` prints in place of their names.
HELP_VARS := DEBATED_ADMIN_TOKEN DEBATED_LISTEN IMAGE

.PHONY: help
help: ## Show this help.
	@awk -v vars='$(foreach v,$(HELP_VARS),$(v)=$($(v)) )' \
		'BEGIN {FS = ":.*## "; n = split(vars, kv, " "); for (i = 1; i <= n; i++) { j = index(kv[i], "="); val[substr(kv[i], 1, j - 1)] = substr(kv[i], j + 1) } } \
		/^[a-zA-Z_-]+:.*## / { d = $$2; for (k in val) gsub("\\$$\\(" k "\\)", val[k], d); printf "  \033[36m%-16s\033[0m %s\n", $$1, d }' $(MAKEFILE_LIST)

$(BIN)/buf-$(BUF_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	@touch $@

$(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@

$(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	@touch $@

$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	@touch $@

$(BIN)/grpcurl-$(GRPCURL_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	@touch $@

.PHONY: grpcurl
grpcurl: $(BIN)/grpcurl-$(GRPCURL_VERSION) ## Install grpcurl into ./bin (for the README's examples).

PROTO_TOOLS := $(BIN)/buf-$(BUF_VERSION) $(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION) $(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION)

.PHONY: tools
tools: $(PROTO_TOOLS) $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) ## Install the pinned build tools into ./bin.

.PHONY: generate
generate: $(PROTO_TOOLS) ## Regenerate the protobuf Go code in gen/.
	buf generate

.PHONY: check-generate
check-generate: generate ## Fail if the committed generated code is not what `make generate` makes.
	@if [ -n "$$(git status --porcelain -- gen)" ]; then \
		echo "generated code is stale: run make generate and commit gen/"; git status --porcelain -- gen; exit 1; fi

.PHONY: web
web: $(BIN)/buf-$(BUF_VERSION) ## Rebuild the dashboard (needs Node and npm): its TypeScript client from proto/, then web/dist.
	cd web && npm ci --no-audit --no-fund
	buf generate --template buf.gen.web.yaml
	cd web && npm run typecheck && npm run build

.PHONY: check-web
check-web: web ## Fail if the committed dashboard (web/dist) or its generated client is not what `make web` makes.
	@if [ -n "$$(git status --porcelain -- web/dist web/src/gen)" ]; then \
		echo "the dashboard bundle is stale: run make web and commit web/"; git status --porcelain -- web/dist web/src/gen; exit 1; fi

.PHONY: lint
# BUF_BREAKING_AGAINST is the API that buf breaking compares proto/ with:
# the previous commit (on a merge, main before it). A clone without that
# commit (a shallow CI checkout) says so and skips the check.
BUF_BREAKING_AGAINST ?= .git\#ref=HEAD~1

lint: $(PROTO_TOOLS) $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) ## Run golangci-lint, buf lint, buf format and buf breaking (against HEAD~1).
	golangci-lint run ./...
	buf lint
	buf format -d --exit-code
	@if git rev-parse --verify -q 'HEAD~1^{commit}' >/dev/null; then \
		echo "buf breaking --against '$(BUF_BREAKING_AGAINST)'"; buf breaking --against '$(BUF_BREAKING_AGAINST)'; \
	else echo "buf breaking: skipped, this clone has no HEAD~1 (shallow clone: fetch-depth 2 or more)"; fi

.PHONY: build
build: ## Build debated and debatectl into ./bin.
	@mkdir -p $(BIN)
	go build -o $(BIN)/ ./cmd/...

.PHONY: run
run: build ## Run the service on the embedded store (admin token: $(DEBATED_ADMIN_TOKEN)).
	DEBATED_ADMIN_TOKEN=$(DEBATED_ADMIN_TOKEN) DEBATED_LISTEN=$(DEBATED_LISTEN) DEBATED_LOG_FORMAT=text $(BIN)/debated serve

.PHONY: image
image: ## Build the static debated binary and its OCI image into bin/debated-image.tar (tag: $(IMAGE)).
	@mkdir -p $(BIN)/linux
	CGO_ENABLED=0 GOOS=linux go build -trimpath -o $(BIN)/linux/debated ./cmd/debated
	cd deploy && go run ./image --binary $(BIN)/linux/debated --out $(BIN)/debated-image.tar --tag $(IMAGE)

.PHONY: chart-check
chart-check: ## Render the Helm chart offline and check every manifest; test the image builder (deploy/).
	cd deploy && go vet ./... && go test $(GO_TEST_FLAGS) ./...

.PHONY: test
test: check-generate check-web lint chart-check ## Run every check and test (needs PostgreSQL at TEST_DATABASE_URL).
	go test $(GO_TEST_FLAGS) ./...

.PHONY: test-short
test-short: ## Run the Go tests only, without lint and generation checks.
	go test $(GO_TEST_FLAGS) ./...

LOAD_RATES ?= 5,10,20,40,80,160
LOAD_STEP  ?= 10s

.PHONY: load
load: build ## Start a local debated (embedded store, or LOAD_DATABASE_URL) and load it at rising rates.
	@set -euo pipefail; dir=$$(mktemp -d); trap 'kill $$pid 2>/dev/null || true; rm -rf "$$dir"' EXIT; \
	DEBATED_ADMIN_TOKEN=load-admin DEBATED_LISTEN=127.0.0.1:50151 DEBATED_METRICS_ADDR=127.0.0.1:50152 \
	DEBATED_DATA_DIR=$$dir DEBATED_LOG_LEVEL=warn DEBATED_DATABASE_URL=$${LOAD_DATABASE_URL:-} \
	DEBATED_SIGNING_KEYS=$${LOAD_DATABASE_URL:+v1:bG9hZC10ZXN0LXNpZ25pbmctc2VjcmV0LW9mLTMyLWJ5dGVzIQ==} \
	DEBATED_CHECKPOINT_KEYS=$${LOAD_DATABASE_URL:+v1:bG9hZC10ZXN0LWNoZWNrcG9pbnQtc2VjcmV0LW9mLTMyLWJ5dGVzIQ==} \
	$(BIN)/debated serve & pid=$$!; \
	for i in $$(seq 1 50); do curl -sf http://127.0.0.1:50152/metrics >/dev/null && break; sleep 0.2; done; \
	$(BIN)/loadgen --addr 127.0.0.1:50151 --admin-token load-admin --metrics-url http://127.0.0.1:50152/metrics \
		--rates $(LOAD_RATES) --step $(LOAD_STEP)

WATCHLOAD_WATCHERS ?= 1,100,1000
WATCHLOAD_DEBATES  ?= 1,10
WATCHLOAD_ROUNDS   ?= 50
# Extra watchload flags, e.g. --full-decode, --floor, --ideal --ideal-pace=20ms, --think-ms=20, --compressor=gzip, --connect or --server-profile FILE.
WATCHLOAD_FLAGS    ?=

.PHONY: watchload
watchload: build ## Start a local debated (embedded store, or LOAD_DATABASE_URL) and measure N watchers of one debate and of ten.
	@set -euo pipefail; dir=$$(mktemp -d); trap 'kill $$pid 2>/dev/null || true; rm -rf "$$dir"' EXIT; \
	DEBATED_ADMIN_TOKEN=load-admin DEBATED_LISTEN=127.0.0.1:50151 DEBATED_METRICS_ADDR=127.0.0.1:50152 \
	DEBATED_DATA_DIR=$$dir DEBATED_LOG_LEVEL=warn DEBATED_DATABASE_URL=$${LOAD_DATABASE_URL:-} DEBATED_PPROF=true \
	DEBATED_SIGNING_KEYS=$${LOAD_DATABASE_URL:+v1:bG9hZC10ZXN0LXNpZ25pbmctc2VjcmV0LW9mLTMyLWJ5dGVzIQ==} \
	DEBATED_CHECKPOINT_KEYS=$${LOAD_DATABASE_URL:+v1:bG9hZC10ZXN0LWNoZWNrcG9pbnQtc2VjcmV0LW9mLTMyLWJ5dGVzIQ==} \
	$(BIN)/debated serve & pid=$$!; \
	for i in $$(seq 1 50); do curl -sf http://127.0.0.1:50152/metrics >/dev/null && break; sleep 0.2; done; \
	$(BIN)/watchload --addr 127.0.0.1:50151 --admin-token load-admin --metrics-url http://127.0.0.1:50152/metrics \
		--watchers $(WATCHLOAD_WATCHERS) --debates $(WATCHLOAD_DEBATES) --rounds $(WATCHLOAD_ROUNDS) $(WATCHLOAD_FLAGS)

.PHONY: bench
bench: ## Run the Go benchmarks (both stores) and print the results.
	go test -run '^$$' -bench . -benchmem -count=1 ./...
