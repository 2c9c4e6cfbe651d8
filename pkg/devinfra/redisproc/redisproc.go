// Package redisproc runs redis-server as a child process with the append-only
// file on (appendfsync everysec, no RDB snapshots): start it on an address
// with its data in a directory, wait until it answers PING (after replaying
// its AOF), and stop it by PID — SIGTERM, then SIGKILL — or kill it to
// simulate a crash. braid dev and the test infrastructure both use it.
package redisproc

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	DefaultReadyTimeout = 15 * time.Second       // until PING answers (AOF replay included)
	pollInterval        = 20 * time.Millisecond  // between PING probes
	probeTimeout        = 500 * time.Millisecond // one probe
)

// Options says how to run redis-server.
type Options struct {
	// Bin is the redis-server executable; default: redis-server on PATH.
	Bin string
	// Addr is host:port to listen on.
	Addr string
	// Dir holds the AOF, the log (redis.log) and early output
	// (redis-server.out); it is created, and made absolute, as redis-server
	// changes into it before it opens its log.
	Dir string
	// ReadyTimeout bounds the wait for PONG; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// SysProcAttr is applied to the child (e.g. its own process group).
	SysProcAttr *syscall.SysProcAttr
	// Password, when set, is required of every client (requirepass) and is
	// what the server, as a replica, authenticates to its master with
	// (masterauth): a Redis Cluster's nodes share one password. It is
	// written to Dir/redis.conf (mode 0600), never put on the command line,
	// where any local user could read it in the process list.
	Password string
	// Args are extra redis-server arguments ("--name", "value", ...), given
	// after the defaults so they override them (e.g. cluster mode). They are
	// on the command line: never put a secret here.
	Args []string
}

// Server is a running (or exited) redis-server.
type Server struct {
	addr, log, out string
	password       string
	cmd            *exec.Cmd
	done           chan struct{}
}

// Start spawns redis-server per o and waits until it answers PING, within
// ctx and o.ReadyTimeout. On failure the child is killed and the error holds
// the end of its output and log.
func Start(ctx context.Context, o Options) (*Server, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("redis-server address %q: %w", o.Addr, err)
	}
	bin := o.Bin
	if bin == "" {
		if bin, err = exec.LookPath("redis-server"); err != nil {
			return nil, fmt.Errorf("redis-server not found on PATH (apt-get install redis-server): %w", err)
		}
	}
	dir, err := filepath.Abs(o.Dir)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return nil, fmt.Errorf("redis data dir %s: %w", o.Dir, err)
	}
	s := &Server{addr: o.Addr, log: filepath.Join(dir, "redis.log"), out: filepath.Join(dir, "redis-server.out"), done: make(chan struct{})}
	// Start-up errors (a bad flag, a port taken) go to stderr before the log opens.
	out, err := os.Create(s.out)
	if err != nil {
		return nil, fmt.Errorf("redis output file: %w", err)
	}
	defer out.Close()
	var args []string
	if o.Password != "" {
		conf := filepath.Join(dir, "redis.conf")
		pw := strconv.Quote(o.Password)
		if err := writeConf(conf, "requirepass "+pw+"\nmasterauth "+pw+"\n"); err != nil {
			return nil, fmt.Errorf("redis config file: %w", err)
		}
		args = append(args, conf) // the config file must come first
	}
	s.password = o.Password
	args = append(args,
		"--bind", host, "--port", port, "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
		"--logfile", s.log, "--daemonize", "no", "--protected-mode", "no",
		// Keep argv as given: a rewritten process title would hide what is
		// on the command line from the test that checks no password is.
		"--set-proc-title", "no")
	s.cmd = exec.Command(bin, append(args, o.Args...)...)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = o.SysProcAttr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("exec %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, cmp.Or(o.ReadyTimeout, DefaultReadyTimeout)); err != nil {
		s.Kill()
		return nil, fmt.Errorf("redis-server pid=%d on %s: %w; output: %s; log: %s",
			s.PID(), o.Addr, err, tail(s.out), tail(s.log))
	}
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.addr }

// PID is the child's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Done is closed once the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop sends SIGTERM (redis-server then fsyncs the AOF and exits) and waits;
// when ctx ends first it sends SIGKILL. Stopping an exited server is a no-op.
func (s *Server) Stop(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop redis-server pid=%d: %w", s.PID(), err)
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		s.Kill()
		return fmt.Errorf("redis-server pid=%d did not stop after SIGTERM; killed", s.PID())
	}
}

// Kill sends SIGKILL and waits for the exit: writes not yet in the AOF are lost.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// waitReady probes with PING until the server answers +PONG (not -LOADING
// while it replays its AOF), it exits, or timeout passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := PingAuth(s.addr, s.password)
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return errors.New("exited before answering PING")
		case <-ctx.Done():
			return fmt.Errorf("no PONG within %s: %w", timeout, err)
		case <-tick.C:
		}
	}
}

// Ping sends one inline PING to addr and expects +PONG.
func Ping(addr string) error { return PingAuth(addr, "") }

// PingAuth is Ping after AUTH password when password is set.
func PingAuth(addr, password string) error {
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	req := "PING\r\n"
	if password != "" {
		req = fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password) + req
	}
	if _, err := conn.Write([]byte(req)); err != nil {
		return err
	}
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	if password != "" {
		if line != "+OK\r\n" {
			return fmt.Errorf("AUTH answered %q", strings.TrimSpace(line))
		}
		if line, err = rd.ReadString('\n'); err != nil {
			return err
		}
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// tail returns the end of the file at path, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	const keep = 1024
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "(empty)"
}

// writeConf writes a config file readable by its owner only, also when an
// earlier one exists with a wider mode.
func writeConf(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}
