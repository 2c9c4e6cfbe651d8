package devstack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Bounds on starting redis-server.
const (
	redisReadyTimeout = 15 * time.Second       // until PING answers (AOF replay included)
	redisPoll         = 50 * time.Millisecond  // between PING probes
	redisProbeTimeout = 500 * time.Millisecond // one probe
)

// redisBackend is the Redis the stack uses: a redis-server process or the
// embedded fallback.
type redisBackend interface {
	// Addr is host:port.
	Addr() string
	// Durable reports whether state survives a restart.
	Durable() bool
	// Exited is closed when the backend stopped on its own.
	Exited() <-chan struct{}
	// Stop shuts the backend down, waiting at most until ctx ends.
	Stop(ctx context.Context) error
}

// redisServer is a redis-server child process with AOF on.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startRedisServer spawns bin listening on addr with its data under
// dataDir/redis (dataDir must be absolute: redis-server changes into --dir
// before it opens its log), and waits until it answers PING.
func startRedisServer(ctx context.Context, bin, dataDir, addr string) (*redisServer, error) {
	host, port, _ := net.SplitHostPort(addr)
	dir := filepath.Join(dataDir, "redis")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("redis data dir %s: %w", dir, err)
	}
	r := &redisServer{addr: addr, log: filepath.Join(dir, "redis.log"), done: make(chan struct{})}
	// Start-up errors (a bad flag, a port taken) go to stderr before the log opens.
	out, err := os.Create(filepath.Join(dir, "redis-server.out"))
	if err != nil {
		return nil, fmt.Errorf("redis output file: %w", err)
	}
	defer out.Close()
	r.cmd = exec.Command(bin,
		"--bind", host, "--port", port, "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
		"--logfile", r.log, "--daemonize", "no", "--protected-mode", "no")
	r.cmd.Stdout, r.cmd.Stderr = out, out
	r.cmd.SysProcAttr = childAttrs()
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("exec %s: %w", bin, err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	if err := r.waitReady(ctx); err != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
		return nil, fmt.Errorf("redis-server pid=%d on %s: %w; output: %s; log: %s",
			r.cmd.Process.Pid, addr, err, tail(out.Name()), tail(r.log))
	}
	return r, nil
}

// waitReady probes with PING until the server answers +PONG (not
// -LOADING while it replays its AOF), it exits, or redisReadyTimeout passes.
func (r *redisServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, redisReadyTimeout)
	defer cancel()
	tick := time.NewTicker(redisPoll)
	defer tick.Stop()
	for {
		err := ping(r.addr)
		if err == nil {
			return nil
		}
		select {
		case <-r.done:
			return errors.New("exited before answering PING")
		case <-ctx.Done():
			return fmt.Errorf("no PONG within %s: %w", redisReadyTimeout, err)
		case <-tick.C:
		}
	}
}

// ping sends one inline PING and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, redisProbeTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(redisProbeTimeout))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// tail returns the last bytes of the file at path, for error messages.
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

func (r *redisServer) Addr() string            { return r.addr }
func (r *redisServer) Durable() bool           { return true }
func (r *redisServer) Exited() <-chan struct{} { return r.done }

// Stop sends SIGTERM to the server's PID (it then rewrites nothing and
// fsyncs the AOF) and waits; when ctx ends first it sends SIGKILL.
func (r *redisServer) Stop(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop redis-server pid=%d: %w", r.cmd.Process.Pid, err)
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		_ = r.cmd.Process.Kill()
		<-r.done
		return fmt.Errorf("redis-server pid=%d did not stop after SIGTERM; killed", r.cmd.Process.Pid)
	}
}
