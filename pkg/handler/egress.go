package handler

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
)

// Egress decides which addresses the http and llm handlers may connect to.
// The zero value is braid-worker's strict default: public addresses only.
//
// The check runs on the resolved address of every connection, at dial time
// (see guard), so it covers redirects, DNS names that resolve (or rebind)
// to an internal address, and every spelling of an IP. Refused by default:
// loopback, unspecified, link-local (cloud metadata), private, carrier-grade
// NAT, unique-local, multicast, broadcast and reserved ranges, and IPv6
// forms that embed such an IPv4 address (IPv4-mapped and -compatible, NAT64,
// 6to4).
type Egress struct {
	// Allow opens host names, addresses and ranges (BRAID_HTTP_ALLOW).
	Allow AllowList
	// AllowLoopback opens 127.0.0.0/8 and ::1, as `braid dev` does so that
	// workflows can call services on the developer's machine. Default false.
	AllowLoopback bool
	// Own lists the listeners of the stack itself (api, Redis, Kafka, health
	// and pprof ports). They stay refused even when Allow or AllowLoopback
	// covers them: a workflow must not talk to Braid's own infrastructure.
	Own []Listener

	// resolver resolves host names for the guard's dialer; nil uses
	// net.DefaultResolver. Tests set it to resolve names without DNS.
	resolver *net.Resolver
}

// Listener is an address the stack itself listens on.
type Listener struct {
	// Name says what listens there, for messages: "api", "redis".
	Name string
	// Addr is host:port as configured. An empty or unspecified host
	// (":8080", "0.0.0.0:8080") stands for every address of this machine.
	Addr string
}

// validate reports an Own listener that is not host:port.
func (e Egress) validate() error {
	var errs []error
	for _, l := range e.Own {
		if _, _, err := splitHostPort(l.Addr); err != nil {
			errs = append(errs, fmt.Errorf("Egress.Own %s %q: want host:port", l.Name, l.Addr))
		}
	}
	return errors.Join(errs...)
}

// splitHostPort splits addr and parses its numeric port.
func splitHostPort(addr string) (host string, port uint16, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: want a number", p)
	}
	return host, uint16(n), nil
}

// EgressError is a connection the egress guard refused. A handler fails
// the attempt permanently with it: the same address would be refused again.
// Its message names the address and the reason, never the URL (which may
// hold credentials).
type EgressError struct {
	// Addr is the refused address as dialled, e.g. "127.0.0.1:6379".
	Addr string
	// Reason says why, e.g. "127.0.0.1 is loopback (allow it with BRAID_HTTP_ALLOW)".
	Reason string
}

// Error implements error.
func (e *EgressError) Error() string { return "egress refused: " + e.Reason }

// llmAllowRule opens the host:port of the operator's LLM endpoint
// (BRAID_LLM_BASE_URL) to the llm handler alone, even on a refused range
// (a model server on the same machine): the operator chose it, a workflow
// did not. ok is false when baseURL names no usable host.
func llmAllowRule(baseURL string) (allowRule, bool) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return allowRule{}, false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return allowRule{}, false
	}
	r := allowRule{text: "BRAID_LLM_BASE_URL", port: uint16(n)}
	if ip, ok := parseHostIP(u.Hostname()); ok {
		ip = ip.Unmap().WithZone("")
		r.prefix = netip.PrefixFrom(ip, ip.BitLen())
		return r, true
	}
	rule, err := parseHostRule(u.Hostname())
	if err != nil || rule.suffix {
		return allowRule{}, false
	}
	r.name = rule.name
	return r, true
}
