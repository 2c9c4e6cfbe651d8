package testinfra

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Bounds on waiting for redis-server.
const (
	readyTimeout = 10 * time.Second       // until PING answers after a start
	stopTimeout  = 5 * time.Second        // after SIGTERM before SIGKILL
	pollInterval = 20 * time.Millisecond  // between readiness probes
	probeTimeout = 500 * time.Millisecond // one PING probe
)

// process is one redis-server run; done closes when it has exited.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start launches redis-server on r.port in r.Dir and waits until ready.
func (r *Redis) start() error {
	logPath := filepath.Join(r.Dir, "redis.log")
	cmd := exec.Command(r.bin,
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
		"--dir", r.Dir, "--logfile", logPath, "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec %s: %w", r.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := waitReady(r.Addr, p.done); err != nil {
		p.kill()
		return fmt.Errorf("redis-server pid=%d addr=%s: %w; log: %s", cmd.Process.Pid, r.Addr, err, tail(logPath))
	}
	r.proc = p
	return nil
}

// waitReady probes addr with PING until it answers +PONG (not -LOADING),
// the process exits, or readyTimeout passes.
func waitReady(addr string, exited <-chan struct{}) error {
	deadline := time.After(readyTimeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if ping(addr) == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before answering PING")
		case <-deadline:
			return fmt.Errorf("no PONG within %s: %w", readyTimeout, ping(addr))
		case <-tick.C:
		}
	}
}

// ping sends one inline PING and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// stop sends SIGTERM and waits stopTimeout, then SIGKILLs.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		p.kill()
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// tail returns the last bytes of the file at path, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const keep = 2048
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
