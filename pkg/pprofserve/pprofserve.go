// Package pprofserve serves the Go runtime profiles (net/http/pprof) on an
// opt-in address, so a running service can be profiled with
// `go tool pprof http://ADDR/debug/pprof/profile`. Services turn it on with
// BRAID_PPROF_ADDR; it is off by default. The profiles reveal internals
// (goroutine stacks, command lines), so bind it to loopback or a private
// interface only: it has no authentication.
package pprofserve

import (
	"log/slog"
	"net/http"
	"net/http/pprof"

	"github.com/braidhq/braid/pkg/opsserve"
)

// Start listens on addr (host:port) and serves /debug/pprof/ there in a
// goroutine (opsserve.Listen, with its bounds). An empty addr means off:
// Start returns nil and no error, and Stop on a nil *opsserve.Server does
// nothing. A listen error is returned at once, so a bad BRAID_PPROF_ADDR
// stops the service at start-up.
func Start(addr string, logger *slog.Logger) (*opsserve.Server, error) {
	return opsserve.Listen("pprof", addr, Handler(), opsserve.DefaultBounds, logger)
}

// Handler returns a mux with the net/http/pprof endpoints under
// /debug/pprof/, built without touching http.DefaultServeMux.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
