# syntax=docker/dockerfile:1
# The Braid orchestrator service: a static binary built from its own module
# (GOWORK=off, CGO_ENABLED=0, time-zone data embedded for schedules), on
# distroless (CA certificates, no shell), as a non-root user. Build from the
# repository root:  docker build -f deploy/orchestrator.Dockerfile -t braid-orchestrator .
# (or make images). The container's health check is the binary itself:
#   braid-orchestrator healthcheck   (probes its own /readyz)
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN cd services/orchestrator && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/braidhq/braid/pkg/buildinfo.Version=${VERSION} -X github.com/braidhq/braid/pkg/buildinfo.Commit=${COMMIT}" \
      -o /out/braid-orchestrator .

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title="braid-orchestrator" \
      org.opencontainers.image.description="Braid workflow engine: the orchestrator service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/braidhq/braid"
COPY --from=build /out/braid-orchestrator /usr/local/bin/braid-orchestrator
USER nonroot:nonroot
EXPOSE 9090
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 CMD ["/usr/local/bin/braid-orchestrator", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/braid-orchestrator"]
