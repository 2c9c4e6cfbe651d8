package testinfra

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// slotFixtures are CLUSTER KEYSLOT answers of redis-server 7.0.15, recorded
// once; TestRedisClusterFailover asks a live cluster for them again.
var slotFixtures = []struct {
	key  string
	slot int
}{
	{"", 0},
	{"a", 15495},
	{"foo", 12182},
	{"bar", 5061},
	{"123456789", 12739}, // CRC16-XMODEM 0x31C3
	{"{user1000}.following", 3443},
	{"{user1000}.followers", 3443},
	{"foo{}{bar}", 8363},    // the first tag is empty: the whole key
	{"foo{{bar}}zap", 4015}, // the tag is "{bar"
	{"foo{bar}{zap}", 5061}, // the first tag only: "bar"
	{"{}", 15257},
	{"{}x", 10595},
	{"x{}", 2608},
	{"{a}{b}", 15495}, // "a"
	{"}{a}", 15495},   // a '}' before the '{' does not count
	{"a{b", 13340},    // no closing brace: the whole key
	{"a}b{c}", 7365},
	{"{{}}", 4092}, // the tag is "{"
	{"{", 4092},
	{"}", 12090},
	{"ключ{ü}", 9552}, // bytes, not runes
	{"braid:ns-1:{r1}:run", 2121},
	{"braid:ns-1:{r1}:claim:A:0:1", 2121},
	{"braid:ns-1:runs:all", 901},
	{"braid:wf:{wf}:admitq", 7598},
	{"braid:{schedules}:due", 1335},
}

func TestSlotMatchesRecordedKeyslots(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0x31C3%SlotCount, Slot("123456789"), "the CRC16-XMODEM check value")
	for _, f := range slotFixtures {
		require.Equal(t, f.slot, Slot(f.key), "key %q", f.key)
	}
}
