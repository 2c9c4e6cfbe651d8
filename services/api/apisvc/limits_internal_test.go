package apisvc

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

func TestBucketsSpendAndRefill(t *testing.T) {
	t.Parallel()
	b := newBuckets(2, 3) // 2 per second, 3 at once
	now := time.Unix(1000, 0)
	for i := range 3 {
		ok, _ := b.take("key:a", now)
		require.True(t, ok, "request %d is within the burst", i)
	}
	ok, wait := b.take("key:a", now)
	require.False(t, ok, "the burst is spent")
	require.Equal(t, 500*time.Millisecond, wait, "one token comes every 1/rate")
	ok, _ = b.take("key:b", now)
	require.True(t, ok, "each client has its own bucket")
	ok, _ = b.take("key:a", now.Add(wait))
	require.True(t, ok, "a refused request spent nothing: the next token comes on time")
	ok, _ = b.take("key:a", now.Add(wait))
	require.False(t, ok)
}

func TestBucketsForgetIdleClients(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	fill := func(b *buckets) {
		for i := range minSweep {
			b.take(fmt.Sprintf("addr:10.0.%d.%d", i/256, i%256), now)
		}
		require.Equal(t, minSweep, b.size())
	}
	b := newBuckets(100, 200) // refills in 2s
	fill(b)
	b.take("addr:192.0.2.1", now.Add(3*time.Second))
	require.Equal(t, 1, b.size(), "full (idle) buckets are forgotten when the map is full")

	b = newBuckets(100, 200)
	fill(b)
	b.take("addr:192.0.2.1", now.Add(time.Second))
	require.Equal(t, minSweep+1, b.size(), "buckets still refilling are kept")
}

func TestNoLimitIsOff(t *testing.T) {
	t.Parallel()
	require.Nil(t, newBuckets(NoLimit, 1))
	var s *slots = newSlots(NoLimit)
	require.Nil(t, s)
	for range 3 {
		require.True(t, s.acquire("key:a"))
	}
	s.release("key:a")
}

func TestSlotsPerClient(t *testing.T) {
	t.Parallel()
	s := newSlots(2)
	require.True(t, s.acquire("key:a"))
	require.True(t, s.acquire("key:a"))
	require.False(t, s.acquire("key:a"), "a third slot is refused")
	require.True(t, s.acquire("key:b"), "another client has its own slots")
	s.release("key:a")
	require.True(t, s.acquire("key:a"), "a released slot can be taken again")
	s.release("key:a")
	s.release("key:a")
	s.release("key:b")
	require.Empty(t, s.held, "clients holding nothing are not remembered")
}

func TestPeerClient(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.7:5000":             "addr:192.0.2.7",
		"[::ffff:192.0.2.7]:5000":    "addr:192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "addr:2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "addr:2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "addr:fe80::/64",
		"not an address":             "addr:not an address",
	} {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/", nil)
		c.Request.RemoteAddr = remote
		c.Request.Header.Set("X-Forwarded-For", "203.0.113.9")
		require.Equal(t, want, peerClient(c), remote)
	}
	require.Equal(t, `API key "ci"`, describeClient("key:ci"))
	require.Equal(t, "client address 192.0.2.7", describeClient("addr:192.0.2.7"))
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1, retryAfter(0))
	require.Equal(t, 1, retryAfter(time.Millisecond))
	require.Equal(t, 1, retryAfter(time.Second))
	require.Equal(t, 2, retryAfter(1001*time.Millisecond))
}
