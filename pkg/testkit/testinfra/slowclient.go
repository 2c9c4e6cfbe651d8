package testinfra

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TricklePace is how often Trickle sends a byte.
const TricklePace = 20 * time.Millisecond

// Trickle writes text to conn one byte every TricklePace from another
// goroutine, as a slow (or slowloris) client does, until all of it is
// written or a write fails because the server closed the connection.
func Trickle(conn net.Conn, text string) {
	go func() {
		for i := range len(text) {
			if _, err := conn.Write([]byte{text[i]}); err != nil {
				return
			}
			time.Sleep(TricklePace) // the client's pace is what is under test
		}
	}()
}

// Slowloris dials addr and trickles the headers of GET path: 80 header
// lines, over a minute at TricklePace. It returns what the server sent
// before it closed the connection, and fails the test if the connection is
// still open after within: a server with a header timeout shorter than that
// cuts the client off.
func Slowloris(t testing.TB, addr, path string, within time.Duration) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("slowloris: dial %s: %v", addr, err)
	}
	defer conn.Close()
	Trickle(conn, "GET "+path+" HTTP/1.1\r\nHost: braid\r\n"+strings.Repeat("X-Slow: drip-drip-drip\r\n", 80)+"\r\n")
	return ClosedWithin(t, conn, within)
}

// ClosedWithin reads conn until the server closes it and returns what it
// read; it fails the test if conn is still open after within.
func ClosedWithin(t testing.TB, conn net.Conn, within time.Duration) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(within)); err != nil {
		t.Fatalf("set read deadline: %v", err)
	}
	b, err := io.ReadAll(conn) // EOF, or a reset: closed either way
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a slow client's connection open for %s (it sent %q)", within, b)
	}
	return string(b)
}
