package devbroker

import (
	"net"
	"sync"
	"time"
)

// pipeConn is the client's end of an in-process connection: a net.Pipe
// whose deadlines are kept lazily. kafka-go moves a reader's read deadline
// before every record it reads from a fetched batch (10 s ahead each time)
// and sets one per request; net.Pipe answers every such call with a new
// runtime timer (time.AfterFunc after stopping the last one), which was 3 %
// of `braid dev`'s CPU on a 10,000-node fan-out. Here a deadline moved later
// costs a lock and a clock read: the armed timer fires at the earlier time,
// finds the deadline moved and re-arms for it. The pipe's own deadline is
// set only when ours passes (and cleared when a new one is set), so a
// blocked or later Read or Write fails with os.ErrDeadlineExceeded exactly as
// on net.Pipe.
type pipeConn struct {
	net.Conn
	read, write *lazyDeadline
}

func newPipeConn(c net.Conn) *pipeConn {
	return &pipeConn{Conn: c, read: &lazyDeadline{apply: c.SetReadDeadline}, write: &lazyDeadline{apply: c.SetWriteDeadline}}
}

// SetDeadline sets both deadlines.
func (c *pipeConn) SetDeadline(t time.Time) error {
	if err := c.read.set(t); err != nil {
		return err
	}
	return c.write.set(t)
}

// SetReadDeadline sets the deadline of reads.
func (c *pipeConn) SetReadDeadline(t time.Time) error { return c.read.set(t) }

// SetWriteDeadline sets the deadline of writes.
func (c *pipeConn) SetWriteDeadline(t time.Time) error { return c.write.set(t) }

// Close closes the pipe and stops the deadlines' timers.
func (c *pipeConn) Close() error {
	c.read.stop()
	c.write.stop()
	return c.Conn.Close()
}

// lazyDeadline is one deadline of a pipeConn. Invariant (under mu): while
// at is set and has not passed, a firing of timer is due at or before at.
type lazyDeadline struct {
	mu      sync.Mutex
	at      time.Time // the deadline as last set; zero: none
	timer   *time.Timer
	armed   bool      // a firing is due at armedAt
	armedAt time.Time //
	passed  bool      // the pipe's own deadline is set to at, which has passed
	apply   func(time.Time) error
}

func (d *lazyDeadline) set(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = t
	wait := time.Until(t)
	if !t.IsZero() && wait <= 0 {
		d.passed = true
		return d.apply(t) // the pipe fails its reads (or writes) from now on
	}
	if d.passed {
		d.passed = false
		if err := d.apply(time.Time{}); err != nil {
			return err
		}
	}
	if t.IsZero() || (d.armed && !t.Before(d.armedAt)) {
		return nil // no deadline, or the armed firing comes first and re-arms
	}
	d.armed, d.armedAt = true, t
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.fire)
	} else {
		d.timer.Reset(wait)
	}
	return nil
}

// fire runs at a firing of the timer: it re-arms for a deadline moved later,
// and sets the pipe's own deadline when ours has passed. A firing that finds
// nothing to do (the deadline cleared, or replaced by an earlier one that a
// Reset already armed) costs nothing else.
func (d *lazyDeadline) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = false
	if d.at.IsZero() || d.passed {
		return
	}
	if wait := time.Until(d.at); wait > 0 {
		d.armed, d.armedAt = true, d.at
		d.timer.Reset(wait)
		return
	}
	d.passed = true
	_ = d.apply(d.at) // an error means the pipe is closed: nothing left to fail
}

func (d *lazyDeadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
	d.armed = false
}
