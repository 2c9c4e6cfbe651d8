package devbroker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Local is a broker's listener for a process that runs the broker and its
// clients together (braid dev): it accepts TCP connections from other
// processes like any listener, and connections from this process through
// Dial, which never leave it — no socket, no system call, no poller wake-up
// per request. Everything above the connection is the same Kafka protocol,
// the same clients and the same broker as over TCP.
//
// An in-process connection is a net.Pipe: synchronous, a write returns once
// the other side has read it. That is safe with kafka-go and kfake because
// neither needs the kernel's buffer to make progress: kafka-go's transport
// writes a request and then reads its answer; its Conn (readers, group
// coordinator) reads answers in whichever of its goroutines waits for one;
// and kfake reads and writes each connection from goroutines of their own.
// Deadlines work as on TCP (kafka-go relies on them); the client's end keeps
// them lazily (pipeConn), as kafka-go moves them for every record it reads.
type Local struct {
	tcp   net.Listener
	addr  string
	conns chan net.Conn
	tcpc  chan accepted
	done  chan struct{}
	once  sync.Once

	memory, overTCP atomic.Int64
}

type accepted struct {
	c   net.Conn
	err error
}

// ListenLocal listens on address over TCP and returns the listener; pass
// it to kfake with kfake.ListenFn.
func ListenLocal(network, address string) (*Local, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return newLocal(ln), nil
}

// newLocal returns a Local accepting TCP connections from ln.
func newLocal(ln net.Listener) *Local {
	l := &Local{tcp: ln, addr: ln.Addr().String(), conns: make(chan net.Conn), tcpc: make(chan accepted), done: make(chan struct{})}
	go l.acceptTCP()
	return l
}

// acceptTCP hands each TCP connection to Accept. A failed accept other
// than the listener's close (too many open files, say) is retried after a
// pause, as net/http does, instead of being passed on: kfake stops
// listening at the first Accept error, which would end the in-process
// connections too. The close is passed on.
func (l *Local) acceptTCP() {
	pause := time.Duration(0)
	for {
		c, err := l.tcp.Accept()
		if err != nil && !errors.Is(err, net.ErrClosed) {
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(pause):
				continue
			case <-l.done:
				return
			}
		}
		pause = 0
		select {
		case l.tcpc <- accepted{c, err}:
		case <-l.done:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		if err != nil {
			return
		}
	}
}

// Accept returns the next connection, in-process or TCP.
func (l *Local) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		l.memory.Add(1)
		return c, nil
	case a := <-l.tcpc:
		if a.err == nil {
			l.overTCP.Add(1)
		}
		return a.c, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; open connections stay open (the broker closes
// its own).
func (l *Local) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.tcp.Close()
}

// Addr is the TCP address, which the broker advertises.
func (l *Local) Addr() net.Addr { return l.tcp.Addr() }

// Dial connects in process when address is the listener's own (the
// bootstrap address, and the one the broker's metadata names), over TCP
// otherwise. It has the signature of eventbus.Config.Dial.
func (l *Local) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	if address != l.addr {
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return newPipeConn(client), nil
	case <-l.done:
		return nil, fmt.Errorf("dial %s in process: %w", address, net.ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accepted reports how many connections were accepted in process and over
// TCP.
func (l *Local) Accepted() (inProcess, overTCP int64) {
	return l.memory.Load(), l.overTCP.Load()
}
