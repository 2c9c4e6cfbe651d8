package testinfra

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
	"github.com/redis/go-redis/v9"
)

// clusterNode is one redis-server of a RedisCluster. Its address, bus
// port and directory stay the same across kill and start.
type clusterNode struct {
	bin, dir, password string
	addr               string
	busPort            int
	proc               *redisproc.Server // nil while killed
	admin              *redis.Client     // this node only, for the cluster commands
}

// startOnFreePorts picks a free client port and a free cluster bus port
// and starts the node, picking again (up to startAttempts) when another
// process took a port first.
func (n *clusterNode) startOnFreePorts(t testing.TB) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		n.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
		n.busPort = FreePort(t)
		err := n.start()
		if err == nil {
			return
		}
		if attempt == startAttempts {
			t.Fatalf("start redis cluster node: %v", err)
		}
		t.Logf("start redis cluster node attempt %d: %v", attempt, err)
	}
}

// start launches the node on its ports and directory and waits for PING.
func (n *clusterNode) start() error {
	p, err := redisproc.Start(context.Background(), redisproc.Options{
		Bin: n.bin, Addr: n.addr, Dir: n.dir, ReadyTimeout: readyTimeout, SysProcAttr: redisAttrs(),
		Password: n.password, Args: n.clusterArgs(),
	})
	if err != nil {
		return err
	}
	n.proc = p
	if n.admin == nil {
		n.admin = redis.NewClient(&redis.Options{Addr: n.addr, Password: n.password,
			ContextTimeoutEnabled: true, MaxRetries: -1, DialTimeout: clusterProbeTimeout})
	}
	return nil
}

// clusterArgs are the node's redis-server arguments beyond redisproc's.
func (n *clusterNode) clusterArgs() []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", // in the node's directory
		// The bus port defaults to port+10000, which FreePort did not reserve.
		"--cluster-port", strconv.Itoa(n.busPort),
		"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
		// A replica may take over however long its link was down: a test
		// that kills a master right after start-up must see a failover.
		"--cluster-replica-validity-factor", "0",
		// Sync a new replica at once, not after the default 5 s delay.
		"--repl-diskless-sync-delay", "0",
		// Stop at SIGTERM without first waiting (up to 10 s) for replicas
		// to catch up: on teardown they stop at the same time.
		"--shutdown-timeout", "0",
	}
}

// kill sends SIGKILL and waits for the exit.
func (n *clusterNode) kill() {
	if n.proc != nil {
		n.proc.Kill()
		n.proc = nil
	}
}

// stop terminates the node if it runs (SIGTERM, then SIGKILL after
// stopTimeout) and closes its admin client.
func (n *clusterNode) stop() {
	if n.proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = n.proc.Stop(ctx) // SIGKILL after stopTimeout
		n.proc = nil
	}
	if n.admin != nil {
		_ = n.admin.Close()
		n.admin = nil
	}
}
