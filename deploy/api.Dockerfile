# syntax=docker/dockerfile:1
# The Braid api service: a static binary built from its own module
# (GOWORK=off, CGO_ENABLED=0, time-zone data embedded for schedules), on
# distroless (CA certificates, no shell), as a non-root user. Build from the
# repository root:  docker build -f deploy/api.Dockerfile -t braid-api .
# (or make images). The container's health check is the binary itself:
#   braid-api healthcheck   (probes its own /readyz)
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN cd services/api && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/braidhq/braid/pkg/buildinfo.Version=${VERSION} -X github.com/braidhq/braid/pkg/buildinfo.Commit=${COMMIT}" \
      -o /out/braid-api .

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title="braid-api" \
      org.opencontainers.image.description="Braid workflow engine: the api service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/braidhq/braid"
COPY --from=build /out/braid-api /usr/local/bin/braid-api
USER nonroot:nonroot
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 CMD ["/usr/local/bin/braid-api", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/braid-api"]
