package handler

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// AllowList is what an operator opens to the http and llm handlers on top
// of public addresses (BRAID_HTTP_ALLOW). The zero value allows nothing.
// Build one with ParseAllowList.
type AllowList struct {
	rules []allowRule
}

// allowRule is one entry: a host name, a "*." suffix or an IP prefix,
// optionally limited to one port.
type allowRule struct {
	text   string       // the entry as written, for messages
	name   string       // lower-case host name without trailing dot; or the suffix ".x.y" when wildcard
	suffix bool         // name is a suffix: "*.x.y" matches a.x.y, not x.y
	prefix netip.Prefix // valid for IP and CIDR entries
	port   uint16       // 0: any port
}

// ParseAllowList parses comma-separated entries, blanks ignored:
//
//	api.example.internal      that host name, whatever it resolves to, any port
//	*.example.internal        every name under example.internal (not the name itself)
//	10.1.2.3 or fd00::1       that address
//	10.1.0.0/16 or fd00::/8   every address in the range
//	host:8443, 10.1.2.3:8443, [fd00::1]:8443   the same, on that port only
//
// A name entry is matched against the host as written in the URL, before
// resolution, so it opens that name even when it resolves to a refused
// address. The error lists every bad entry.
func ParseAllowList(s string) (AllowList, error) {
	var l AllowList
	var errs []error
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		r, err := parseAllowRule(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %q: %w", e, err))
			continue
		}
		l.rules = append(l.rules, r)
	}
	return l, errors.Join(errs...)
}

// MustParseAllowList is ParseAllowList for fixed entries (tests, examples); it panics on an error.
func MustParseAllowList(s string) AllowList {
	l, err := ParseAllowList(s)
	if err != nil {
		panic(err)
	}
	return l
}

// String returns the entries, comma-separated, as written.
func (l AllowList) String() string {
	s := make([]string, len(l.rules))
	for i, r := range l.rules {
		s[i] = r.text
	}
	return strings.Join(s, ",")
}

// Len returns the number of entries.
func (l AllowList) Len() int { return len(l.rules) }

// with returns l plus r, leaving l's backing array alone.
func (l AllowList) with(r allowRule) AllowList {
	return AllowList{rules: append(l.rules[:len(l.rules):len(l.rules)], r)}
}

func parseAllowRule(e string) (allowRule, error) {
	if strings.Contains(e, "/") {
		return parseCIDRRule(e)
	}
	if ip, ok := parseStrictIP(e); ok {
		return allowRule{text: e, prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	host, port := e, uint16(0)
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return allowRule{}, fmt.Errorf("port %q: want 1-65535", p)
		}
		host, port = h, uint16(n)
	}
	r, err := parseHostRule(host)
	r.text, r.port = e, port
	return r, err
}

// parseCIDRRule parses an address range; an IPv4-mapped range becomes the
// IPv4 range, since the guard compares IPv4 forms.
func parseCIDRRule(e string) (allowRule, error) {
	p, err := netip.ParsePrefix(e)
	if err != nil {
		return allowRule{}, errors.New("not a CIDR range like 10.0.0.0/8")
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return allowRule{text: e, prefix: p.Masked()}, nil
}

// parseStrictIP parses a standard IP spelling, bracketed or not; an
// IPv4-mapped address becomes its IPv4 address.
func parseStrictIP(s string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// hostLabelRE is one DNS label (letters, digits, hyphens; underscores are
// tolerated as in service names).
var hostLabelRE = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$`)

// parseHostRule parses a host name or "*." suffix (port already split off).
func parseHostRule(host string) (allowRule, error) {
	if ip, ok := parseStrictIP(host); ok {
		return allowRule{prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	if _, ok := parseInetAton(host); ok {
		return allowRule{}, errors.New("a numeric host is an IPv4 address: write it as a.b.c.d")
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "*" {
		return allowRule{}, errors.New(`"*" alone is not allowed: list what to open (0.0.0.0/0 and ::/0 open every address)`)
	}
	wildcard := strings.HasPrefix(name, "*.")
	if wildcard {
		name = name[1:] // keep the dot: ".example.internal"
	}
	if err := checkHostName(strings.TrimPrefix(name, ".")); err != nil {
		return allowRule{}, err
	}
	return allowRule{name: name, suffix: wildcard}, nil
}

// checkHostName accepts a DNS name of valid labels.
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return errors.New("not a host name, IP, CIDR or host:port")
	}
	for _, label := range strings.Split(name, ".") {
		if !hostLabelRE.MatchString(label) {
			return fmt.Errorf("not a host name, IP, CIDR or host:port (bad label %q)", label)
		}
	}
	return nil
}

// allowsName reports whether a name entry opens host on port. host is as
// written in the URL; IP hosts never match a name entry.
func (l AllowList) allowsName(host string, port uint16) bool {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, r := range l.rules {
		if r.name == "" || (r.port != 0 && r.port != port) {
			continue
		}
		if (!r.suffix && name == r.name) || (r.suffix && strings.HasSuffix(name, r.name)) {
			return true
		}
	}
	return false
}

// allowsIP reports whether an IP or CIDR entry opens ip on port. An IPv6
// form embedding an IPv4 address is also matched by its IPv4 address.
func (l AllowList) allowsIP(ip netip.Addr, port uint16) bool {
	ip = ip.WithZone("")
	v4, _, embeds := embeddedIPv4(ip)
	for _, r := range l.rules {
		if !r.prefix.IsValid() || (r.port != 0 && r.port != port) {
			continue
		}
		if r.prefix.Contains(ip) || (embeds && r.prefix.Contains(v4)) {
			return true
		}
	}
	return false
}
