# syntax=docker/dockerfile:1
# The braid CLI (apply, run, get, logs, ...; `braid dev` needs redis-server
# and is not for this image). Static, distroless, non-root. Build from the
# repository root:  docker build -f deploy/braid.Dockerfile -t braid .
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN cd cmd/braid && GOWORK=off CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/braidhq/braid/pkg/buildinfo.Version=${VERSION} -X github.com/braidhq/braid/pkg/buildinfo.Commit=${COMMIT}" \
      -o /out/braid .

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title="braid" \
      org.opencontainers.image.description="Braid workflow engine: the braid CLI" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/braidhq/braid"
COPY --from=build /out/braid /usr/local/bin/braid
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/braid"]
