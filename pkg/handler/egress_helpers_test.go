package handler

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingListener is a loopback listener that records every connection
// it accepts and closes it at once (a stand-in for the api's port or
// Redis). Wrapped in an httptest server it answers HTTP instead.
type countingListener struct {
	net.Listener
	mu       sync.Mutex
	accepted []string // remote addresses, in accept order
}

func newCountingListener(t *testing.T, addr string) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	return &countingListener{Listener: ln}
}

// Accept implements net.Listener, recording the connection.
func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.accepted = append(l.accepted, c.RemoteAddr().String())
		l.mu.Unlock()
	}
	return c, err
}

// serveAndClose accepts and closes connections until the test ends.
func (l *countingListener) serveAndClose(t *testing.T) {
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
}

// requireNoAccepts asserts that no connection reached l before now. It
// connects once itself and waits for that connection to be accepted:
// connections are accepted in arrival order, so any earlier one, even one
// still in the backlog, has been counted by then.
func (l *countingListener) requireNoAccepts(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	sentinel := c.LocalAddr().String()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.accepted) > 0 && l.accepted[len(l.accepted)-1] == sentinel
	}, 10*time.Second, 5*time.Millisecond, "the sentinel connection was not accepted")
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Equal(t, []string{sentinel}, l.accepted, "a refused call reached the listener")
}

// newCountingServer is an httptest server answering 200 "reached" on a
// counting listener.
func newCountingServer(t *testing.T) (*httptest.Server, *countingListener) {
	t.Helper()
	ln := newCountingListener(t, "127.0.0.1:0")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "reached")
	}))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, ln
}

// fakeResolver resolves names from names without DNS (the test machine
// has none): the Go resolver is pointed at an in-memory DNS server. Names
// not listed have no records; /etc/hosts still applies first.
func fakeResolver(names map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveFakeDNS(server, names)
		return client, nil
	}}
}

// serveFakeDNS answers one DNS query over TCP framing (a net.Pipe is a
// stream, so the resolver length-prefixes its messages).
func serveFakeDNS(conn net.Conn, names map[string]netip.Addr) {
	defer conn.Close()
	var n uint16
	if binary.Read(conn, binary.BigEndian, &n) != nil {
		return
	}
	q := make([]byte, n)
	if _, err := io.ReadFull(conn, q); err != nil {
		return
	}
	resp := dnsAnswer(q, names)
	_ = binary.Write(conn, binary.BigEndian, uint16(len(resp)))
	_, _ = conn.Write(resp)
}

// dnsAnswer answers query q with the A or AAAA record of a listed name
// when the family matches, else with no records.
func dnsAnswer(q []byte, names map[string]netip.Addr) []byte {
	i := 12 // after the header: the question's labels, then type and class
	var labels []string
	for q[i] != 0 {
		l := int(q[i])
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:i+5]...)
	ip, ok := names[strings.ToLower(strings.Join(labels, "."))]
	if ok && ((qtype == 1 && ip.Is4()) || (qtype == 28 && ip.Is6())) {
		resp[7] = 1 // one answer: name pointer, type, class IN, TTL 60, the address
		resp = append(resp, 0xc0, 12, byte(qtype>>8), byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(ip.BitLen()/8))
		resp = append(resp, ip.AsSlice()...)
	}
	return resp
}

// hostPort returns the host:port of a test server URL.
func hostPort(t *testing.T, srv *httptest.Server) (host, port string) {
	t.Helper()
	host, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	return host, port
}
