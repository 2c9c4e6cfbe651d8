package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListenPorts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		addr      string
		brokers   int
		wantHost  string
		wantPorts []int
		wantErr   string
	}{
		{"one address", "127.0.0.1:19092", 0, "127.0.0.1", []int{19092}, ""},
		{"one address, three brokers", "127.0.0.1:19092", 3, "127.0.0.1", []int{19092, 19093, 19094}, ""},
		{"free ports", "127.0.0.1:0", 3, "127.0.0.1", []int{0, 0, 0}, ""},
		{"one address each", "127.0.0.1:7001, 127.0.0.1:7005,127.0.0.1:7003", 0, "127.0.0.1", []int{7001, 7005, 7003}, ""},
		{"addresses and a matching count", "127.0.0.1:7001,127.0.0.1:7005", 2, "127.0.0.1", []int{7001, 7005}, ""},
		{"count not matching the addresses", "127.0.0.1:7001,127.0.0.1:7005", 3, "", nil, "does not match"},
		{"two hosts", "127.0.0.1:7001,127.0.0.2:7005", 0, "", nil, "one host"},
		{"no port", "127.0.0.1", 0, "", nil, "missing port"},
		{"negative count", "127.0.0.1:7001", -1, "", nil, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host, ports, err := listenPorts(tt.addr, tt.brokers)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantHost, host)
			require.Equal(t, tt.wantPorts, ports)
		})
	}
}
