# Braid — every target loops over the workspace's modules.
SHELL := /bin/bash
MODULES := proto-events pkg services/api services/orchestrator services/worker cmd/braid e2e bench deploy
GO ?= go
FUZZTIME ?= 10s
TEST_FLAGS ?= -race -count=1 -timeout 15m
# The e2e tests spend most of their time waiting on the processes they
# start, so four run at once (Go's default is GOMAXPROCS, two here): the
# module took 167-182 s instead of 320 s on 2 cores, and `make chaos`
# keeps its own pace.
E2E_PARALLEL ?= 4
# The build's version and commit (braid version, /healthz): go.work builds
# do not stamp VCS information themselves.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/braidhq/braid/pkg/buildinfo.Version=$(VERSION) -X github.com/braidhq/braid/pkg/buildinfo.Commit=$(COMMIT)
# The failpoints build tag (fault injection for the e2e suite): its own
# packages are tested, and the code that calls them vetted, with the tag too.
FAILPOINT_PKGS := services/orchestrator/internal/failpoint pkg/worker/internal/failpoint
FAILPOINT_VET := services/orchestrator pkg/worker services/worker

.PHONY: all build test test-short chaos lint proto deps fuzz run bench bench-ui clean ui images mutate e2e-docker

all: build

## deps: install what the tests and the dev stack need (idempotent)
deps:
	@scripts/ensure-deps.sh

## build: compile every module
build:
	@for m in $(MODULES); do echo "==> build $$m"; (cd $$m && $(GO) build ./...) || exit 1; done

## test: unit, integration (real redis-server + kfake over TCP) and bounded fuzzing
test: deps
	@for m in $(MODULES); do echo "==> test $$m"; p=; if [ $$m = e2e ]; then p="-parallel $(E2E_PARALLEL)"; fi; (cd $$m && $(GO) test $(TEST_FLAGS) $$p ./...) || exit 1; done
	@echo "==> test the failpoints builds"; for d in $(FAILPOINT_PKGS); do (cd $$d && $(GO) test -tags failpoints $(TEST_FLAGS) ./...) || exit 1; done
	@$(MAKE) --no-print-directory fuzz

## test-short: the same without the race detector and fuzzing
test-short: deps
	@for m in $(MODULES); do echo "==> test $$m"; (cd $$m && $(GO) test -count=1 -short ./...) || exit 1; done

## chaos: the full e2e fault suite (kill -9, SIGSTOP, Redis and broker outages at full scale) and the Redis Cluster / Kafka cluster suite
chaos: deps
	cd e2e && BRAID_CHAOS=1 $(GO) test -count=1 -timeout 60m -run 'TestFault|TestCluster' -v .

## e2e-docker: the stack scenarios on Kafka and Redis containers (testcontainers-go); without a Docker engine every test skips and says why
# The tests on StartStack's infrastructure: the shared stack's scenarios, the CLI and UI on it, schedules.
E2E_DOCKER_RUN ?= ^(TestStack|TestCLIApplyAndRunWatch|TestCLICancelAndRetry|TestCLIErrors|TestUI|TestPermanentFailure|TestRetrySuccess)
E2E_DOCKER_SKIP ?= ^TestUIRecoversWhenTheAPIComesBack$$
e2e-docker: deps
	@cd e2e && BRAID_E2E_INFRA=containers $(GO) test -count=1 -timeout 30m -run '$(E2E_DOCKER_RUN)' -skip '$(E2E_DOCKER_SKIP)' -v . > ../.braid-e2e-docker.log 2>&1; s=$$?; \
	  grep -E '^ *--- (PASS|FAIL|SKIP)' ../.braid-e2e-docker.log; \
	  if grep -q 'no Docker engine' ../.braid-e2e-docker.log; then echo "make e2e-docker: the container tests skipped: $$(grep -m1 -o 'no Docker engine.*' ../.braid-e2e-docker.log)"; fi; \
	  [ $$s -eq 0 ] || { tail -60 ../.braid-e2e-docker.log; echo "e2e-docker failed; full log in .braid-e2e-docker.log"; }; exit $$s

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

# staticcheck is pinned in tools/go.mod, as buf is. go tool refuses -modfile
# in workspace mode, so it runs with GOWORK=off: each module then loads its
# packages through its own go.mod (tidy, with replace directives for ours),
# as the Dockerfiles build them.
STATICCHECK = GOWORK=off $(GO) tool -modfile=$(CURDIR)/tools/go.mod staticcheck

## lint: go vet and staticcheck on every module (and the failpoints builds), gofmt check
lint:
	@for m in $(MODULES); do echo "==> vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done
	@for d in $(FAILPOINT_VET); do echo "==> vet -tags failpoints $$d"; (cd $$d && $(GO) vet -tags failpoints ./...) || exit 1; done
	@for m in $(MODULES); do echo "==> staticcheck $$m"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done
	@for d in $(FAILPOINT_VET); do echo "==> staticcheck -tags failpoints $$d"; (cd $$d && $(STATICCHECK) -tags failpoints ./...) || exit 1; done
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## proto: regenerate proto-events with the tools pinned in tools/go.mod
proto:
	cd proto-events && GOWORK=off $(GO) tool -modfile=../tools/go.mod buf generate

## run: start the whole stack in one process (braid dev)
run: deps
	@$(GO) build -ldflags "$(LDFLAGS)" -o .braid/bin/braid ./cmd/braid
	@exec .braid/bin/braid dev

## bench: load the real stack (separate processes) and print one JSON line per workload
##        (BENCH_SUSTAIN=60s, BENCH_REPS=3, BENCH_ONLY=diamond,fanout, BENCH_PROFILE=cpu.pprof,
##        BENCH_CLUSTER=1: on a 3+3 Redis Cluster and three kfake brokers, lines marked "setup":"cluster")
bench:
	@scripts/ensure-deps.sh >&2
	@cd bench && $(GO) run . $(BENCH_FLAGS)

clean:
	rm -rf .braid

## bench-ui: the run page in headless Chromium at 1,000 and 10,000 nodes (JSON lines on stdout)
bench-ui: deps
	@cd e2e && { BRAID_UI_BENCH=1 $(GO) test -count=1 -timeout 20m -run 'TestUIBench$$' -v . > ../.braid-bench-ui.log 2>&1; s=$$?; \
	  grep '^{' ../.braid-bench-ui.log; [ $$s -eq 0 ] || { tail -40 ../.braid-bench-ui.log; echo "bench-ui failed; full log in .braid-bench-ui.log"; exit $$s; }; }

## images: build the container images (deploy/*.Dockerfile) stamped with the version; needs a Docker engine
images:
	@if ! docker info >/dev/null 2>&1; then echo "make images: no Docker engine here; skipped (cd deploy && go test ./... checks the Dockerfiles and builds each binary as they do)"; exit 0; fi; \
	for f in api orchestrator worker braid; do \
	  tag=braid-$$f; [ $$f = braid ] && tag=braid; \
	  docker build -f deploy/$$f.Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $$tag:$(VERSION) -t $$tag:dev . || exit 1; \
	done

## mutate: one-line mutations of the critical paths; fails if a test suite misses one (CI runs it)
mutate:
	@scripts/mutate.sh

## ui: copy the example workflows into the web UI's embedded assets (no JS build step: the UI is plain ES modules)
ui:
	@rm -f services/api/apisvc/ui/examples/*.json
	@cp examples/*.json services/api/apisvc/ui/examples/
	@cd services/api/apisvc/ui/examples && { printf '{\n "files": [\n'; ls *.json | grep -v '^index.json$$' | sed 's/.*/  "&"/' | paste -sd, | sed 's/,/,\n/g'; printf ' ]\n}\n'; } > index.json.tmp && mv index.json.tmp index.json
