package handler

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Dialer settings of the http and llm handlers' transport (those of
// http.DefaultTransport).
const (
	dialTimeout   = 30 * time.Second
	dialKeepAlive = 30 * time.Second
)

// guard checks every connection the http and llm handlers open. It lives
// in the transport's dialer, not in the handler, because only there is the
// address final: a URL's host may be a name that resolves (or rebinds
// between a check and the dial) to an internal address, an odd spelling of
// an IP, or a redirect target the handler never sees.
type guard struct {
	allow    AllowList
	loopback bool
	own      []ownListener
	resolver *net.Resolver
}

// ownListener is a parsed Egress.Own entry.
type ownListener struct {
	name, addr string
	host       string // lower-case; "" for every local address
	port       uint16
}

// nameAllowedKey marks a dial context whose host name an allow entry opened.
type nameAllowedKey struct{}

// newGuard builds the guard of e, with extra rules (the LLM endpoint).
// Own entries that are not host:port are skipped; Config.Validate reports them.
func newGuard(e Egress, extra ...allowRule) *guard {
	g := &guard{allow: e.Allow, loopback: e.AllowLoopback, resolver: e.resolver}
	for _, r := range extra {
		g.allow = g.allow.with(r)
	}
	for _, l := range e.Own {
		host, port, err := splitHostPort(l.Addr)
		if err != nil {
			continue
		}
		if ip, ok := parseStrictIP(host); ok && ip.IsUnspecified() {
			host = ""
		}
		g.own = append(g.own, ownListener{name: l.Name, addr: l.Addr, host: strings.ToLower(host), port: port})
	}
	return g
}

// dialContext is the transport's DialContext. A host spelled as an IP is
// dialled as its canonical IP; a host name that an allow entry opens is
// marked so that control lets it through whatever it resolves to. Every
// other decision is control's, on the resolved address.
func (g *guard) dialContext() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, Resolver: g.resolver, ControlContext: g.control}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := splitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if ip, ok := parseHostIP(host); ok {
			addr = netip.AddrPortFrom(ip, port).String()
		} else if g.allow.allowsName(host, port) {
			ctx = context.WithValue(ctx, nameAllowedKey{}, true)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// control runs on each socket after resolution and before connect: the
// address is the one the connection will reach.
func (g *guard) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &EgressError{Addr: address, Reason: address + " is not an IP address and port"}
	}
	return g.check(ctx, ap)
}

// check decides one resolved address: the stack's own listeners never,
// a name-allowed dial always, a public address always, a refused one only
// when an entry (or AllowLoopback) opens it.
func (g *guard) check(ctx context.Context, ap netip.AddrPort) error {
	if l, ok := g.ownListener(ctx, ap); ok {
		return &EgressError{Addr: ap.String(), Reason: fmt.Sprintf(
			"%s is Braid's own %s listener (%s), which cannot be allowed", ap, l.name, l.addr)}
	}
	if named, _ := ctx.Value(nameAllowedKey{}).(bool); named {
		return nil
	}
	ip := ap.Addr()
	class := classify(ip)
	if class == "" || g.allow.allowsIP(ip, ap.Port()) || (class == classLoopback && g.loopback) {
		return nil
	}
	return &EgressError{Addr: ap.String(), Reason: fmt.Sprintf(
		"%s is %s (allow it with BRAID_HTTP_ALLOW)", describe(ip), class)}
}

// ownListener returns the own listener ap reaches, if any. Names are
// resolved here, and only for a listener on ap's port.
func (g *guard) ownListener(ctx context.Context, ap netip.AddrPort) (ownListener, bool) {
	ip := ap.Addr().Unmap().WithZone("")
	for _, l := range g.own {
		if l.port == ap.Port() && g.reaches(ctx, ip, l.host) {
			return l, true
		}
	}
	return ownListener{}, false
}

// reaches reports whether a connection to ip may land on a listener bound
// to host ("" for every local address). Connecting to 0.0.0.0 or :: lands
// on this machine, so it reaches every listener on a local address. A host
// name is resolved; one that does not resolve names no reachable listener.
func (g *guard) reaches(ctx context.Context, ip netip.Addr, host string) bool {
	if host == "" {
		return isLocal(ip)
	}
	for _, h := range g.lookup(ctx, host) {
		if h == ip || (ip.IsUnspecified() && isLocal(h)) {
			return true
		}
	}
	return false
}

// lookup returns host's addresses, unmapped and without zones.
func (g *guard) lookup(ctx context.Context, host string) []netip.Addr {
	if ip, ok := parseStrictIP(host); ok {
		return []netip.Addr{ip.WithZone("")}
	}
	r := g.resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, _ := r.LookupNetIP(ctx, "ip", host)
	for i, h := range ips {
		ips[i] = h.Unmap().WithZone("")
	}
	return ips
}

// isLocal reports whether ip is an address of this machine.
func isLocal(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // cannot tell: refuse rather than risk the stack's own port
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}
