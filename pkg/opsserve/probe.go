package opsserve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ProbeTimeout bounds one Probe.
const ProbeTimeout = 3 * time.Second

// Probe asks http://<addr><path> once and returns nil on a 2xx answer. A
// listen address with no host or a wildcard host (":8080",
// "0.0.0.0:8080", "[::]:8080") is probed on loopback.
func Probe(ctx context.Context, addr, path string) error {
	if addr == "" {
		return fmt.Errorf("no address to probe: set the service's HTTP address")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("probe address %q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("probe %s: %s: %s", url, res.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// HealthcheckArg is the argument that makes a service binary probe its own
// readiness and exit (0 ready, 1 not): `braid-worker healthcheck`.
const HealthcheckArg = "healthcheck"

// RunHealthcheck probes addr's /readyz, prints a failure to w and returns
// the process exit code.
func RunHealthcheck(addr string, w io.Writer) int {
	if err := Probe(context.Background(), addr, "/readyz"); err != nil {
		fmt.Fprintln(w, "not ready:", err)
		return 1
	}
	return 0
}
