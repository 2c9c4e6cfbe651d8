package devbroker

import (
	"net"
	"sync"
)

// ConnTracker hands kfake its listeners (kfake.ListenFn with Listen) and
// remembers the connections each accepts, by listen address, so that a
// broker can be killed for real (Drop after kfake's RemoveNode): RemoveNode
// only closes the listener, and a removed broker goes on answering the
// connections it has.
type ConnTracker struct {
	mu    sync.Mutex
	conns map[string]map[net.Conn]struct{}
	dead  map[string]bool // dropped and not listened on since
}

// NewConnTracker returns an empty tracker.
func NewConnTracker() *ConnTracker {
	return &ConnTracker{conns: map[string]map[net.Conn]struct{}{}, dead: map[string]bool{}}
}

// Listen listens on address and tracks what the listener accepts; with
// a host it binds that host instead of the one kfake asks for.
func (c *ConnTracker) Listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	c.mu.Lock()
	delete(c.dead, addr)
	c.mu.Unlock()
	return &trackedListener{Listener: ln, c: c, addr: addr}, nil
}

// Drop closes every open connection accepted on addr, and any that its
// closed listener's last Accept still hands over.
func (c *ConnTracker) Drop(addr string) {
	c.mu.Lock()
	conns := c.conns[addr]
	delete(c.conns, addr)
	c.dead[addr] = true
	c.mu.Unlock()
	for conn := range conns {
		_ = conn.Close()
	}
}

// add tracks conn, or closes it if addr was dropped.
func (c *ConnTracker) add(addr string, conn net.Conn) {
	c.mu.Lock()
	dead := c.dead[addr]
	if !dead {
		if c.conns[addr] == nil {
			c.conns[addr] = map[net.Conn]struct{}{}
		}
		c.conns[addr][conn] = struct{}{}
	}
	c.mu.Unlock()
	if dead {
		_ = conn.Close()
	}
}

func (c *ConnTracker) remove(addr string, conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.conns[addr], conn)
}

// trackedListener records each accepted connection until it is closed.
type trackedListener struct {
	net.Listener
	c    *ConnTracker
	addr string
}

func (l *trackedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, l: l}
	l.c.add(l.addr, tc)
	return tc, nil
}

// trackedConn forgets itself when closed.
type trackedConn struct {
	net.Conn
	l    *trackedListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.l.c.remove(c.l.addr, c) })
	return c.Conn.Close()
}
