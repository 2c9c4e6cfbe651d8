package rediscluster

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
	"github.com/redis/go-redis/v9"
)

// node is one redis-server of a Cluster. Its address, bus port and
// directory stay the same across kill and start.
type node struct {
	bin, dir, password string
	nodeTimeout        time.Duration
	attrs              *syscall.SysProcAttr
	addr               string
	busPort            int
	proc               *redisproc.Server // nil while killed or stopped
	admin              *redis.Client     // this node only, for the cluster commands
}

// startOnFreePorts picks a free client port and a free cluster bus port
// and starts the node, picking again (up to startAttempts) when another
// process took a port first.
func (n *node) startOnFreePorts(ctx context.Context, freePort func() (int, error)) error {
	var err error
	for range startAttempts {
		var port int
		if port, err = freePort(); err != nil {
			return fmt.Errorf("free port: %w", err)
		}
		if n.busPort, err = freePort(); err != nil {
			return fmt.Errorf("free port: %w", err)
		}
		n.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = n.start(ctx); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%d attempts: %w", startAttempts, err)
}

// start launches the node on its ports and directory and waits for PING.
func (n *node) start(ctx context.Context) error {
	p, err := redisproc.Start(ctx, redisproc.Options{
		Bin: n.bin, Addr: n.addr, Dir: n.dir, ReadyTimeout: nodeReadyTimeout, SysProcAttr: n.attrs,
		Password: n.password, Args: n.clusterArgs(),
	})
	if err != nil {
		return err
	}
	n.proc = p
	if n.admin == nil {
		n.admin = redis.NewClient(&redis.Options{Addr: n.addr, Password: n.password,
			ContextTimeoutEnabled: true, MaxRetries: -1, DialTimeout: probeTimeout})
	}
	return nil
}

// clusterArgs are the node's redis-server arguments beyond redisproc's.
func (n *node) clusterArgs() []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", // in the node's directory
		// The bus port defaults to port+10000, which was not checked to be free.
		"--cluster-port", strconv.Itoa(n.busPort),
		"--cluster-node-timeout", strconv.FormatInt(n.nodeTimeout.Milliseconds(), 10),
		// A replica may take over however long its link was down: a test
		// that kills a master right after start-up must see a failover.
		"--cluster-replica-validity-factor", "0",
		// Sync a new replica at once, not after the default 5 s delay.
		"--repl-diskless-sync-delay", "0",
		// Stop at SIGTERM without first waiting (up to 10 s) for replicas
		// to catch up: on Stop they stop at the same time.
		"--shutdown-timeout", "0",
	}
}

// kill sends SIGKILL and waits for the exit.
func (n *node) kill() {
	if n.proc != nil {
		n.proc.Kill()
		n.proc = nil
	}
}

// stop terminates the node if it runs (SIGTERM, then SIGKILL after
// nodeStopTimeout) and closes its admin client.
func (n *node) stop() error {
	var err error
	if n.proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), nodeStopTimeout)
		defer cancel()
		err = n.proc.Stop(ctx) // SIGKILL after nodeStopTimeout
		n.proc = nil
	}
	if n.admin != nil {
		_ = n.admin.Close()
		n.admin = nil
	}
	return err
}

// kernelPort is a loopback TCP port the kernel just handed out.
func kernelPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
