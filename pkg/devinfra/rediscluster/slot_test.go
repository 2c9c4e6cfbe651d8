package rediscluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSlot checks the CRC16-XMODEM check value and the hash-tag rules
// against CLUSTER KEYSLOT answers of redis-server 7.0.15 (testinfra's
// TestRedisClusterFailover asks a live cluster for more of them).
func TestSlot(t *testing.T) {
	t.Parallel()
	require.Equal(t, uint16(0x31C3), crc16("123456789"), "the CRC16-XMODEM check value")
	for _, tt := range []struct {
		key  string
		want int
	}{
		{"123456789", 12739},
		{"{user1000}.following", 3443},
		{"foo{}{bar}", 8363}, // the first tag is empty: the whole key
		{"foo{{bar}}zap", 4015},
		{"a{b", 13340}, // no closing brace: the whole key
	} {
		require.Equal(t, tt.want, Slot(tt.key), "key %q", tt.key)
	}
}
