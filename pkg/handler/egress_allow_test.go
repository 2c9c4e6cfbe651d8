package handler

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    []allowRule
		wantErr []string
	}{
		{name: "empty", input: " , "},
		{name: "name", input: "API.Example.Internal.", want: []allowRule{{text: "API.Example.Internal.", name: "api.example.internal"}}},
		{name: "wildcard", input: "*.example.internal", want: []allowRule{{text: "*.example.internal", name: ".example.internal", suffix: true}}},
		{name: "name and port", input: "svc:8443", want: []allowRule{{text: "svc:8443", name: "svc", port: 8443}}},
		{name: "ip", input: "10.1.2.3", want: []allowRule{{text: "10.1.2.3", prefix: netip.MustParsePrefix("10.1.2.3/32")}}},
		{name: "mapped ip", input: "::ffff:10.1.2.3", want: []allowRule{{text: "::ffff:10.1.2.3", prefix: netip.MustParsePrefix("10.1.2.3/32")}}},
		{name: "ipv6", input: "[fd00::1]", want: []allowRule{{text: "[fd00::1]", prefix: netip.MustParsePrefix("fd00::1/128")}}},
		{name: "cidr masked", input: "10.1.2.3/16", want: []allowRule{{text: "10.1.2.3/16", prefix: netip.MustParsePrefix("10.1.0.0/16")}}},
		{name: "mapped cidr", input: "::ffff:10.0.0.0/104", want: []allowRule{{text: "::ffff:10.0.0.0/104", prefix: netip.MustParsePrefix("10.0.0.0/8")}}},
		{name: "ip and port", input: "127.0.0.1:8081, [::1]:8081", want: []allowRule{
			{text: "127.0.0.1:8081", prefix: netip.MustParsePrefix("127.0.0.1/32"), port: 8081},
			{text: "[::1]:8081", prefix: netip.MustParsePrefix("::1/128"), port: 8081}}},
		{name: "every error reported", input: "10.0.0.0/33, ok.internal, bad_host!, *, 127.1, svc:0, svc:http, a..b",
			wantErr: []string{`"10.0.0.0/33": not a CIDR`, `"bad_host!": not a host name`, `"*": "*" alone is not allowed`,
				`"127.1": a numeric host is an IPv4 address`, `"svc:0": port "0"`, `"svc:http": port "http"`, `"a..b"`}},
		{name: "wildcard inside", input: "a.*.internal", wantErr: []string{`bad label "*"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAllowList(tt.input)
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					require.ErrorContains(t, err, w)
				}
				require.NotContains(t, err.Error(), "ok.internal")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.rules)
		})
	}
}

func TestAllowListMatches(t *testing.T) {
	t.Parallel()
	l := MustParseAllowList("api.internal, *.svc.internal, 10.0.0.0/8, 192.168.1.5:8080, cache.internal:6380")
	require.Equal(t, "api.internal,*.svc.internal,10.0.0.0/8,192.168.1.5:8080,cache.internal:6380", l.String())
	require.True(t, l.allowsName("API.internal.", 1))
	require.True(t, l.allowsName("a.b.svc.internal", 443))
	require.False(t, l.allowsName("svc.internal", 443), "a wildcard opens names under it, not the name itself")
	require.False(t, l.allowsName("evilsvc.internal", 443))
	require.True(t, l.allowsName("cache.internal", 6380))
	require.False(t, l.allowsName("cache.internal", 6379))
	require.False(t, l.allowsName("10.0.0.1", 80), "an IP host is not a name")
	require.True(t, l.allowsIP(netip.MustParseAddr("10.9.9.9"), 1))
	require.True(t, l.allowsIP(netip.MustParseAddr("::ffff:10.9.9.9"), 1))
	require.True(t, l.allowsIP(netip.MustParseAddr("64:ff9b::a09:909"), 1), "an embedded IPv4 address is matched too")
	require.False(t, l.allowsIP(netip.MustParseAddr("11.0.0.1"), 1))
	require.True(t, l.allowsIP(netip.MustParseAddr("192.168.1.5"), 8080))
	require.False(t, l.allowsIP(netip.MustParseAddr("192.168.1.5"), 8081))
	require.False(t, AllowList{}.allowsIP(netip.MustParseAddr("10.0.0.1"), 1))
}

func TestLLMAllowRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base string
		want allowRule
		ok   bool
	}{
		{"http://127.0.0.1:11434/v1", allowRule{text: "BRAID_LLM_BASE_URL", prefix: netip.MustParsePrefix("127.0.0.1/32"), port: 11434}, true},
		{"https://LLM.internal/v1", allowRule{text: "BRAID_LLM_BASE_URL", name: "llm.internal", port: 443}, true},
		{"http://[::1]/v1", allowRule{text: "BRAID_LLM_BASE_URL", prefix: netip.MustParsePrefix("::1/128"), port: 80}, true},
		{"http://127.1:8000", allowRule{text: "BRAID_LLM_BASE_URL", prefix: netip.MustParsePrefix("127.0.0.1/32"), port: 8000}, true},
		{"", allowRule{}, false},
		{"/v1", allowRule{}, false},
	}
	for _, tt := range tests {
		got, ok := llmAllowRule(tt.base)
		require.Equal(t, tt.ok, ok, tt.base)
		require.Equal(t, tt.want, got, tt.base)
	}
}
