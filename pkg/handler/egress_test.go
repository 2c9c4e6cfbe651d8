package handler

import (
	"net/netip"
	"testing"

	"github.com/braidhq/braid/pkg/worker"
	"github.com/stretchr/testify/require"
)

// ssrfTarget is a URL host an http node might aim at Braid's neighbours.
type ssrfTarget struct {
	name  string
	host  string // URL host; the test server's port is added
	allow string // the BRAID_HTTP_ALLOW entry that opens it
	want  string // in the refusal: the resolved address and its class
	reach bool   // once opened, the call reaches the loopback test server
}

var ssrfTargets = []ssrfTarget{
	{"loopback", "127.0.0.1", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"loopback other", "127.0.0.2", "127.0.0.2", "127.0.0.2 is loopback", false},
	{"short", "127.1", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"decimal", "2130706433", "127.0.0.1", "127.0.0.1 is loopback", true},
	{"octal", "0177.0.0.1", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"octal single", "017700000001", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"hex", "0x7f000001", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"hex dotted", "0x7f.0.0.1", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"hex short", "0X7F.1", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"localhost", "localhost", "localhost", "127.0.0.1 is loopback", true},
	{"localhost upper", "LOCALHOST", "localhost", "127.0.0.1 is loopback", true},
	{"ipv6 loopback", "[::1]", "::1", "::1 is loopback", false},
	{"v4-mapped", "[::ffff:127.0.0.1]", "127.0.0.0/8", "127.0.0.1 is loopback", true},
	{"v4-mapped hex", "[::ffff:7f00:1]", "127.0.0.1", "127.0.0.1 is loopback", true},
	{"v4-compatible", "[::127.0.0.1]", "127.0.0.0/8", "(IPv4-compatible 127.0.0.1) is loopback", false},
	{"nat64", "[64:ff9b::7f00:1]", "64:ff9b::/96", "(NAT64 127.0.0.1) is loopback", false},
	{"6to4", "[2002:7f00:1::]", "2002::/16", "(6to4 127.0.0.1) is loopback", false},
	{"unspecified", "0.0.0.0", "0.0.0.0", "0.0.0.0 is unspecified", true}, // Linux connects it to this host
	{"unspecified v6", "[::]", "::", ":: is unspecified", false},
	{"metadata", "169.254.169.254", "169.254.169.254:80,169.254.0.0/16", "169.254.169.254 is link-local", false},
	{"link-local v6", "[fe80::1]", "fe80::/10", "fe80::1 is link-local", false},
	{"private 10", "10.0.0.1", "10.0.0.0/8", "10.0.0.1 is private", false},
	{"private 172", "172.16.0.1", "172.16.0.0/12", "172.16.0.1 is private", false},
	{"private 192", "192.168.1.1", "192.168.1.1", "192.168.1.1 is private", false},
	{"cgnat", "100.64.0.1", "100.64.0.0/10", "100.64.0.1 is carrier-grade NAT", false},
	{"unique-local", "[fc00::1]", "fc00::/7", "fc00::1 is unique-local", false},
	{"multicast", "224.0.0.1", "224.0.0.0/4", "224.0.0.1 is multicast", false},
	{"multicast v6", "[ff02::1]", "ff00::/8", "ff02::1 is multicast", false},
	{"broadcast", "255.255.255.255", "255.255.255.255", "255.255.255.255 is broadcast", false},
	{"dns to loopback", "rebind.example", "rebind.example", "127.0.0.1 is loopback", true},
	{"dns to loopback abs", "rebind.example.", "rebind.example", "127.0.0.1 is loopback", true},
	{"dns wildcard", "svc.internal.example", "*.internal.example", "127.0.0.1 is loopback", true},
	{"dns to ::1", "v6.rebind.example", "v6.rebind.example", "::1 is loopback", false},
	{"dns to metadata", "meta.rebind.example", "meta.rebind.example", "169.254.169.254 is link-local", false},
}

// testNames is what fakeResolver resolves for the targets above.
var testNames = map[string]netip.Addr{
	"rebind.example":       netip.MustParseAddr("127.0.0.1"),
	"svc.internal.example": netip.MustParseAddr("127.0.0.1"),
	"v6.rebind.example":    netip.MustParseAddr("::1"),
	"meta.rebind.example":  netip.MustParseAddr("169.254.169.254"),
}

// ssrfConfig is a strict handler config resolving names with testNames.
func ssrfConfig(allow string) Config {
	return Config{Egress: Egress{Allow: MustParseAllowList(allow), resolver: fakeResolver(testNames)}}
}

// TestEgressRefusesInternalTargets: by default every target fails
// permanently with a clear refusal that names the resolved address, and
// no connection reaches the listening server behind the loopback ones.
func TestEgressRefusesInternalTargets(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, len(ssrfTargets), 25)
	srv, ln := newCountingServer(t)
	_, port := hostPort(t, srv)
	t.Run("targets", func(t *testing.T) {
		for _, tt := range ssrfTargets {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				url := "http://user:hunter2@" + tt.host + ":" + port + "/p?token=secret"
				// The timeout only bounds a broken guard: a refusal is immediate.
				out, _, err := handle(t, ssrfConfig(""), NameHTTP, jsonConfig(t, map[string]any{"url": url, "timeout": "3s"}))
				require.Nil(t, out)
				requirePermanent(t, err, "http GET http://"+tt.host+":"+port+"/p: egress refused: ", tt.want,
					"(allow it with BRAID_HTTP_ALLOW)")
				require.NotContains(t, err.Error(), "hunter2")
				require.NotContains(t, err.Error(), "secret")
			})
		}
	})
	ln.requireNoAccepts(t)
}

// TestEgressAllowListOpensTargets: each target's entry opens it. Loopback
// ones then reach the test server; the others get past the guard and fail
// (or time out) at the network, not with a refusal.
func TestEgressAllowListOpensTargets(t *testing.T) {
	t.Parallel()
	srv, _ := newCountingServer(t)
	_, port := hostPort(t, srv)
	for _, tt := range ssrfTargets {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := "http://" + tt.host + ":" + port + "/"
			out, _, err := handle(t, ssrfConfig(tt.allow), NameHTTP, jsonConfig(t, map[string]any{"url": url, "timeout": "1s"}))
			if tt.reach {
				require.NoError(t, err)
				require.Equal(t, "reached", asMap(t, out)["body"])
				return
			}
			if err != nil {
				require.NotContains(t, err.Error(), "egress refused")
				require.False(t, worker.IsPermanent(err), "a network failure is retryable: %v", err)
			}
		})
	}
}

// TestEgressEntryScope: an entry opens only what it names.
func TestEgressEntryScope(t *testing.T) {
	t.Parallel()
	srv, ln := newCountingServer(t)
	host, port := hostPort(t, srv)
	tests := []struct {
		name, allow, host, want string
	}{
		{"other port", host + ":1", host, "127.0.0.1 is loopback"},
		{"other address", "127.0.0.2", host, "127.0.0.1 is loopback"},
		{"name does not open its address", "localhost", host, "127.0.0.1 is loopback"},
		{"address does not open other names", "127.0.0.2/32", "localhost", "127.0.0.1 is loopback"},
		{"wildcard excludes the apex", "*.rebind.example", "rebind.example", "127.0.0.1 is loopback"},
		{"wildcard matches whole labels", "*.ample", "rebind.example", "127.0.0.1 is loopback"},
		{"v6 range does not open v4", "::/0", host, "127.0.0.1 is loopback"},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, _, err := handle(t, ssrfConfig(tt.allow), NameHTTP, jsonConfig(t, map[string]any{"url": "http://" + tt.host + ":" + port + "/"}))
				require.ErrorContains(t, err, tt.want)
			})
		}
	})
	ln.requireNoAccepts(t)
}
