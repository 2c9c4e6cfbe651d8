// Package check holds the tests that prove, without a Docker engine or a
// cluster, what can be proven of Braid's deployment files: the compose file
// loads with the compose-spec library and has the services, health checks,
// dependencies, volumes and bindings a user relies on; every Dockerfile
// parses and builds a static, non-root image of the service it names; the
// kustomize base and overlay build and every object decodes strictly into
// its Kubernetes type; and every BRAID_* variable these files set is one a
// service reads, and is documented in the README.
package check
