package handler

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct{ ip, want string }{
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"127.255.0.1", classLoopback},
		{"0.1.2.3", classUnspecified},
		{"::", classUnspecified},
		{"::1", classLoopback},
		{"::ffff:169.254.169.254", classLinkLocal},
		{"::a9fe:a9fe", classLinkLocal}, // IPv4-compatible 169.254.169.254
		{"2002:a00:1::", classPrivate},  // 6to4 of 10.0.0.1
		{"64:ff9b::c0a8:101", classPrivate},
		{"64:ff9b:1::1", classPrivate},
		{"172.31.255.255", classPrivate},
		{"172.32.0.1", ""},
		{"100.127.255.255", classCGNAT},
		{"100.128.0.1", ""},
		{"fd12::1", classUniqueLocal},
		{"fe80::1%eth0", classLinkLocal},
		{"fec0::1", classPrivate},
		{"239.1.1.1", classMulticast},
		{"ff05::2", classMulticast},
		{"255.255.255.255", classBroadcast},
		{"240.0.0.1", classReserved},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, classify(netip.MustParseAddr(tt.ip)), tt.ip)
	}
}

func TestParseHostIP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want string // "" when host is not an IP
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0x7F000001", "127.0.0.1"},
		{"10.0x10.0377", "10.16.0.255"},
		{"[::1]", "::1"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"0", "0.0.0.0"},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"127.0x100", "127.0.1.0"},
		{"1.2.65536", ""},
		{"4294967296", ""},
		{"0b1111111.1", ""},
		{"0o177.1", ""},
		{"1_0.0.0.1", ""},
		{"0x", ""},
		{"example.com", ""},
		{"127.0.0.1.", ""},
		{"", ""},
	}
	for _, tt := range tests {
		ip, ok := parseHostIP(tt.host)
		if tt.want == "" {
			require.False(t, ok, "%q parsed as %s", tt.host, ip)
			continue
		}
		require.True(t, ok, tt.host)
		require.Equal(t, tt.want, ip.String(), tt.host)
	}
}

func TestGuardCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	strict := newGuard(Egress{})
	require.NoError(t, strict.check(ctx, netip.MustParseAddrPort("93.184.216.34:443")), "public addresses pass")
	require.ErrorContains(t, strict.check(ctx, netip.MustParseAddrPort("127.0.0.1:80")), "127.0.0.1 is loopback")

	dev := newGuard(Egress{AllowLoopback: true})
	require.NoError(t, dev.check(ctx, netip.MustParseAddrPort("127.0.0.1:80")))
	require.NoError(t, dev.check(ctx, netip.MustParseAddrPort("[::1]:80")))
	require.ErrorContains(t, dev.check(ctx, netip.MustParseAddrPort("10.0.0.1:80")), "10.0.0.1 is private",
		"AllowLoopback opens loopback only")

	named := context.WithValue(ctx, nameAllowedKey{}, true)
	require.NoError(t, strict.check(named, netip.MustParseAddrPort("10.0.0.1:80")), "a name entry opens whatever it resolves to")
	own := newGuard(Egress{Own: []Listener{{Name: "redis", Addr: "10.0.0.5:6379"}}, Allow: MustParseAllowList("10.0.0.0/8")})
	require.ErrorContains(t, own.check(named, netip.MustParseAddrPort("10.0.0.5:6379")), "Braid's own redis listener")
	require.NoError(t, own.check(ctx, netip.MustParseAddrPort("10.0.0.5:6380")))
	require.NoError(t, own.check(ctx, netip.MustParseAddrPort("10.0.0.6:6379")))
}

func TestEgressValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, Config{Egress: Egress{Own: []Listener{{Name: "api", Addr: ":8080"}, {Name: "redis", Addr: "redis:6379"}}}}.Validate())
	err := Config{Egress: Egress{Own: []Listener{{Name: "api", Addr: "8080"}, {Name: "redis", Addr: "redis:x"}}}}.Validate()
	require.ErrorContains(t, err, `Egress.Own api "8080"`)
	require.ErrorContains(t, err, `Egress.Own redis "redis:x"`)
}
