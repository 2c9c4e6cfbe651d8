package handler

import (
	"net/netip"
	"strconv"
	"strings"
)

// Classes of address the egress guard refuses unless allowed.
const (
	classLoopback    = "loopback"
	classUnspecified = "unspecified"
	classLinkLocal   = "link-local"
	classPrivate     = "private"
	classCGNAT       = "carrier-grade NAT"
	classUniqueLocal = "unique-local"
	classMulticast   = "multicast"
	classBroadcast   = "broadcast"
	classReserved    = "reserved"
)

// rangeClass names one refused range.
type rangeClass struct {
	prefix netip.Prefix
	class  string
}

// refusedRanges are the ranges a default guard refuses. IPv6 forms that
// embed an IPv4 address are unwrapped first (embeddedIPv4), so only their
// IPv4 address is looked up here.
var refusedRanges = []rangeClass{
	{netip.MustParsePrefix("0.0.0.0/8"), classUnspecified}, // Linux connects 0.0.0.0 to this host
	{netip.MustParsePrefix("127.0.0.0/8"), classLoopback},
	{netip.MustParsePrefix("10.0.0.0/8"), classPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), classPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), classPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), classCGNAT},
	{netip.MustParsePrefix("169.254.0.0/16"), classLinkLocal}, // cloud metadata lives here
	{netip.MustParsePrefix("224.0.0.0/4"), classMulticast},
	{netip.MustParsePrefix("255.255.255.255/32"), classBroadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), classReserved},
	{netip.MustParsePrefix("::/128"), classUnspecified},
	{netip.MustParsePrefix("::1/128"), classLoopback},
	{netip.MustParsePrefix("fe80::/10"), classLinkLocal},
	{netip.MustParsePrefix("fec0::/10"), classPrivate}, // deprecated site-local
	{netip.MustParsePrefix("fc00::/7"), classUniqueLocal},
	{netip.MustParsePrefix("ff00::/8"), classMulticast},
	{netip.MustParsePrefix("64:ff9b:1::/48"), classPrivate}, // local-use NAT64 (RFC 8215)
}

// embedding names an IPv6 range that carries an IPv4 address, and where.
type embedding struct {
	prefix netip.Prefix
	name   string
	at     int // index of the IPv4 address's first byte
}

// embeddings are the IPv6 forms whose IPv4 address decides where a
// connection ends up: a host, a NAT64 gateway or a 6to4 relay delivers it
// to that IPv4 address, so ::ffff:127.0.0.1 is as much loopback as 127.0.0.1.
var embeddings = []embedding{
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped", 12},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64", 12},
	{netip.MustParsePrefix("2002::/16"), "6to4", 2},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible", 12}, // after :: and ::1 are classified
}

// embeddedIPv4 returns the IPv4 address ip carries and the name of the
// form, or ok false for a plain address.
func embeddedIPv4(ip netip.Addr) (v4 netip.Addr, form string, ok bool) {
	if !ip.Is6() || ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback() {
		return netip.Addr{}, "", false
	}
	ip = ip.WithZone("")
	for _, e := range embeddings {
		if e.prefix.Contains(ip) {
			b := ip.As16()
			return netip.AddrFrom4([4]byte(b[e.at : e.at+4])), e.name, true
		}
	}
	return netip.Addr{}, "", false
}

// classify returns the class of a refused address, or "" for a public one.
// An IPv6 form embedding an IPv4 address takes the IPv4 address's class.
func classify(ip netip.Addr) string {
	if v4, _, ok := embeddedIPv4(ip); ok {
		ip = v4
	}
	ip = ip.WithZone("")
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return ""
}

// describe renders ip for an error, naming the IPv4 address it embeds.
func describe(ip netip.Addr) string {
	if v4, form, ok := embeddedIPv4(ip); ok {
		return ip.String() + " (" + form + " " + v4.String() + ")"
	}
	return ip.String()
}

// parseHostIP parses host as an IP address in any spelling a C resolver
// accepts: standard IPv4 and IPv6 (brackets and a zone allowed), and the
// inet_aton forms "127.1", "2130706433", "0177.0.0.1" and "0x7f.1". The
// guard dials the parsed address itself, so a spelling can neither reach
// DNS (where it would fail as "no such host") nor be read differently by
// another resolver.
func parseHostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip, true
	}
	return parseInetAton(host)
}

// parseInetAton parses the 1 to 4 dot-separated numbers of inet_aton:
// each decimal, octal (leading 0) or hex (0x); the last fills the bytes
// the others left.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseAtonPart parses one inet_aton number. strconv's base 0 also takes
// Go's 0b, 0o and _ spellings, which inet_aton does not.
func parseAtonPart(p string) (uint64, bool) {
	lp := strings.ToLower(p)
	if strings.Contains(lp, "_") || strings.HasPrefix(lp, "0b") || strings.HasPrefix(lp, "0o") {
		return 0, false
	}
	n, err := strconv.ParseUint(lp, 0, 32)
	return n, err == nil
}
