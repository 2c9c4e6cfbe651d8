# syntax=docker/dockerfile:1
# The Braid worker service: a static binary built from its own module
# (GOWORK=off, CGO_ENABLED=0, time-zone data embedded for schedules), on
# distroless (CA certificates, no shell), as a non-root user. Build from the
# repository root:  docker build -f deploy/worker.Dockerfile -t braid-worker .
# (or make images). The container's health check is the binary itself:
#   braid-worker healthcheck   (probes its own /readyz)
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN cd services/worker && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/braidhq/braid/pkg/buildinfo.Version=${VERSION} -X github.com/braidhq/braid/pkg/buildinfo.Commit=${COMMIT}" \
      -o /out/braid-worker .

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title="braid-worker" \
      org.opencontainers.image.description="Braid workflow engine: the worker service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/braidhq/braid"
COPY --from=build /out/braid-worker /usr/local/bin/braid-worker
USER nonroot:nonroot
EXPOSE 8081
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 CMD ["/usr/local/bin/braid-worker", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/braid-worker"]
