package testinfra

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// nameSeq makes names unique within this test binary; the pid makes them
// unique across binaries that share one broker or Redis.
var nameSeq atomic.Uint64

// maxNameStem bounds the part of a unique name taken from the test name.
const maxNameStem = 40

// handedOut holds every port FreePort returned in this process: the kernel
// may hand a just-released port to the next bind(0), so two parallel tests
// could otherwise get the same port before either binds it.
var handedOut sync.Map

// freePortAttempts bounds the search for a port not yet handed out.
const freePortAttempts = 100

// FreePort returns a TCP port on 127.0.0.1 that was free when asked and that
// no earlier FreePort call in this process returned. Another process may
// still take it before the caller binds it; prefer letting the server pick
// port 0 when it can report the port back.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// freePort is FreePort's search, returning its failure.
func freePort() (int, error) {
	for range freePortAttempts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if _, dup := handedOut.LoadOrStore(port, true); !dup {
			return port, nil
		}
	}
	return 0, fmt.Errorf("free port: no new port in %d attempts", freePortAttempts)
}

// UniqueName returns prefix-<test name>-<pid>-<seq>, using only [a-z0-9-]
// in the test-name part, so the result is a valid Kafka topic name, group id
// and Redis key part, and differs for every call in every test process.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	return fmt.Sprintf("%s-%s-%d-%d", prefix, stem(t.Name()), os.Getpid(), nameSeq.Add(1))
}

// stem lowercases name, maps every byte outside [a-z0-9] to '-' and keeps
// at most maxNameStem bytes.
func stem(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	if len(b) > maxNameStem {
		b = b[:maxNameStem]
	}
	return string(b)
}
