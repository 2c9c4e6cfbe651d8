package devbroker

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipePair is an in-process connection as Dial makes it: the client's end
// lazy, the server's a plain net.Pipe end.
func pipePair(t *testing.T) (*pipeConn, net.Conn) {
	t.Helper()
	c, s := net.Pipe()
	pc := newPipeConn(c)
	t.Cleanup(func() { _ = pc.Close(); _ = s.Close() })
	return pc, s
}

// readResult runs one Read of c in a goroutine and returns its outcome.
func readResult(c net.Conn) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		out <- err
	}()
	return out
}

// awaitErr waits up to limit for a result of readResult or writeResult.
func awaitErr(t *testing.T, ch <-chan error, limit time.Duration) (error, bool) {
	t.Helper()
	select {
	case err := <-ch:
		return err, true
	case <-time.After(limit):
		return nil, false
	}
}

// requireWaiting fails unless the read res is still blocked after d.
func requireWaiting(t *testing.T, res <-chan error, d time.Duration, msg string) {
	t.Helper()
	_, done := awaitErr(t, res, d)
	require.False(t, done, msg)
}

// requireDelivered writes a byte at the server's end s and fails unless
// the blocked read res gets it.
func requireDelivered(t *testing.T, res <-chan error, s net.Conn, msg string) {
	t.Helper()
	go func() { _, _ = s.Write([]byte{1}) }()
	err, done := awaitErr(t, res, 5*time.Second)
	require.True(t, done, msg)
	require.NoError(t, err, msg)
}

func TestLazyDeadlineFailsABlockedRead(t *testing.T) {
	c, _ := pipePair(t)
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(start.Add(50*time.Millisecond)))
	err, done := awaitErr(t, readResult(c), 5*time.Second)
	require.True(t, done, "the read outlived its deadline")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "the read failed before its deadline")
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a deadline's error is a timeout, as kafka-go expects")
}

// A deadline moved later (what kafka-go does before each record) holds the
// read until the later time, though the timer armed for the first still
// fires on the way.
func TestLazyDeadlineMovedLaterWaitsForTheLater(t *testing.T) {
	c, s := pipePair(t)
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(start.Add(30*time.Millisecond)))
	require.NoError(t, c.SetReadDeadline(start.Add(60*time.Millisecond)))
	require.NoError(t, c.SetReadDeadline(start.Add(2*time.Second)))
	res := readResult(c)
	requireWaiting(t, res, 150*time.Millisecond, "the read failed at an earlier deadline than its last")
	requireDelivered(t, res, s, "data before the deadline is read")
	// The next read fails at the moved deadline, not later.
	err, done := awaitErr(t, readResult(c), 5*time.Second)
	require.True(t, done, "the read outlived its deadline")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second)
}

func TestLazyDeadlineMovedEarlierFiresEarlier(t *testing.T) {
	c, _ := pipePair(t)
	start := time.Now()
	require.NoError(t, c.SetReadDeadline(start.Add(time.Hour)))
	require.NoError(t, c.SetReadDeadline(start.Add(40*time.Millisecond)))
	err, done := awaitErr(t, readResult(c), 5*time.Second)
	require.True(t, done, "the earlier deadline did not replace the armed later one")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

func TestLazyDeadlineClearedAndPast(t *testing.T) {
	c, s := pipePair(t)
	// A deadline in the past fails at once, and keeps failing.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
	for range 2 {
		err, done := awaitErr(t, readResult(c), 5*time.Second)
		require.True(t, done)
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	}
	// Cleared, reads wait for data again.
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	res := readResult(c)
	requireWaiting(t, res, 100*time.Millisecond, "a cleared deadline still failed the read")
	requireDelivered(t, res, s, "a read after the deadline was cleared")
	// A deadline that passed while armed is cleared by a later one.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
	err, _ := awaitErr(t, readResult(c), 5*time.Second)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Hour)))
	requireDelivered(t, readResult(c), s, "a new deadline did not clear the one that had passed")
	// Cleared while armed: the firing finds nothing to do.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	require.NoError(t, c.SetReadDeadline(time.Time{}))
	res = readResult(c)
	requireWaiting(t, res, 150*time.Millisecond, "a cleared deadline fired")
	requireDelivered(t, res, s, "a read after the cleared deadline")
}

func TestLazyDeadlineOnWrites(t *testing.T) {
	c, s := pipePair(t)
	require.NoError(t, c.SetDeadline(time.Now().Add(40*time.Millisecond)))
	out := make(chan error, 1)
	go func() { _, err := c.Write([]byte{1}); out <- err }() // nobody reads s
	err, done := awaitErr(t, out, 5*time.Second)
	require.True(t, done, "the write outlived its deadline")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	_ = s
}
