// Package rediscluster runs a Redis Cluster of real redis-server processes
// on loopback ports, outside of any test: masters that each serve a
// contiguous range of the 16384 hash slots and replicas of each, formed
// with CLUSTER ADDSLOTSRANGE, MEET and REPLICATE (no redis-cli), every node
// with AOF in its own directory. It can kill a master and wait for its
// replica to take over, restart a killed node and wait until it is a
// replica in sync, and make replicas catch up. The test helpers
// (testinfra.StartRedisCluster) and `make bench`'s cluster setup use it.
//
// A Cluster's methods are not safe for concurrent use with each other;
// Addrs and URL stay valid across KillMaster and Restart.
package rediscluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
)

// Defaults and bounds.
const (
	// DefaultMasters is Config.Masters when unset.
	DefaultMasters = 3
	// DefaultNodeTimeout is the cluster-node-timeout when Config.NodeTimeout
	// is unset: a master unreachable this long is failed over. Small, so a
	// test's failover takes seconds (node timeout + election), not the
	// Redis default of 15 s.
	DefaultNodeTimeout = time.Second
	// DefaultReadyTimeout bounds Start's wait for a healthy cluster when
	// Config.ReadyTimeout is unset.
	DefaultReadyTimeout = 30 * time.Second
	nodeReadyTimeout    = 10 * time.Second // one node, until it answers PING
	nodeStopTimeout     = 5 * time.Second  // after SIGTERM, before SIGKILL
	startAttempts       = 3                // per node, when a free port was taken first
	probeTimeout        = 2 * time.Second  // one admin command
)

// URLScheme is the scheme of Cluster.URL, the form statestore.NewClient
// reads as a Redis Cluster.
const URLScheme = "redis-cluster"

// Config says what cluster Start builds.
type Config struct {
	// Dir holds one directory per node (node-0, node-1, …: AOF,
	// nodes.conf, redis.log); required, created when missing.
	Dir string
	// Bin is the redis-server executable; default: redis-server on PATH.
	Bin string
	// Password, when set, is required of every client (requirepass), and
	// replicas sync with it (masterauth). It goes into each node's
	// redis.conf, never on a command line.
	Password string
	// Masters is how many masters serve the slots, each a contiguous
	// range; default DefaultMasters.
	Masters int
	// ReplicasPerMaster is how many replicas each master has; 0: none.
	ReplicasPerMaster int
	// NodeTimeout is every node's cluster-node-timeout; default
	// DefaultNodeTimeout.
	NodeTimeout time.Duration
	// ReadyTimeout bounds the wait, after every node answers PING, until
	// the cluster is healthy; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// FreePort returns a free loopback TCP port; default: one the kernel
	// hands out. Each node takes two (client and cluster bus).
	FreePort func() (int, error)
	// SysProcAttr is applied to every redis-server (e.g. a parent-death
	// signal).
	SysProcAttr *syscall.SysProcAttr
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	c.Masters = cmp.Or(c.Masters, DefaultMasters)
	c.NodeTimeout = cmp.Or(c.NodeTimeout, DefaultNodeTimeout)
	c.ReadyTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout)
	if c.FreePort == nil {
		c.FreePort = kernelPort
	}
	switch {
	case c.Dir == "":
		return c, errors.New("redis cluster: Dir is required")
	case c.Masters < 1 || c.Masters > statestore.SlotCount:
		return c, fmt.Errorf("redis cluster: %d masters, want 1..%d", c.Masters, statestore.SlotCount)
	case c.ReplicasPerMaster < 0:
		return c, fmt.Errorf("redis cluster: %d replicas per master, want ≥ 0", c.ReplicasPerMaster)
	case c.NodeTimeout < 0 || c.ReadyTimeout < 0:
		return c, errors.New("redis cluster: NodeTimeout and ReadyTimeout must not be negative")
	}
	if c.Bin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return c, fmt.Errorf("redis cluster: redis-server not found on PATH (apt-get install redis-server): %w", err)
		}
		c.Bin = bin
	}
	return c, nil
}

// Cluster is a running Redis Cluster started by Start. Which node is a
// master changes with KillMaster; the addresses do not.
type Cluster struct {
	// Addrs are every node's host:port: the masters first, in slot order,
	// then the replicas — the first replica of each master in the masters'
	// order, then the second, and so on. Any one is a seed.
	Addrs []string
	// URL is redis-cluster://[:password@]host:port,host:port,... listing
	// every node, for statestore.NewClient and BRAID_REDIS_URL.
	URL string

	cfg   Config
	nodes []*node
}

// Start starts cfg.Masters × (1 + cfg.ReplicasPerMaster) redis-server
// processes in cluster mode on free loopback ports, gives each master its
// slots, joins the nodes with CLUSTER MEET, makes the replicas with CLUSTER
// REPLICATE and waits (within ctx and cfg.ReadyTimeout) until every node
// says cluster_state:ok with every slot served, every master has its
// replicas and every replica is in sync. On failure every node started is
// stopped.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg}
	total := cfg.Masters * (1 + cfg.ReplicasPerMaster)
	for i := range total {
		n := &node{bin: cfg.Bin, dir: filepath.Join(cfg.Dir, "node-"+strconv.Itoa(i)), password: cfg.Password,
			nodeTimeout: cfg.NodeTimeout, attrs: cfg.SysProcAttr}
		if err := n.startOnFreePorts(ctx, cfg.FreePort); err != nil {
			_ = c.Stop()
			return nil, fmt.Errorf("redis cluster node %d of %d: %w", i+1, total, err)
		}
		c.nodes = append(c.nodes, n)
		c.Addrs = append(c.Addrs, n.addr)
	}
	c.URL = clusterURL(c.Addrs, cfg.Password)
	fctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	if err := c.form(fctx); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("form redis cluster %v: %w", c.Addrs, err)
	}
	return c, nil
}

// clusterURL is the redis-cluster:// URL of addrs with password.
func clusterURL(addrs []string, password string) string {
	auth := ""
	if password != "" {
		auth = url.UserPassword("", password).String() + "@"
	}
	return URLScheme + "://" + auth + strings.Join(addrs, ",")
}

// Masters is the number of masters (and of slot ranges).
func (c *Cluster) Masters() int { return c.cfg.Masters }

// PIDs are the process ids of the nodes that run, in Addrs order.
func (c *Cluster) PIDs() []int {
	var out []int
	for _, n := range c.live() {
		out = append(out, n.proc.PID())
	}
	return out
}

// PID is the process id of the node at addr, or 0 when it is not a
// running node of c.
func (c *Cluster) PID(addr string) int {
	if n := c.node(addr); n != nil && n.proc != nil {
		return n.proc.PID()
	}
	return 0
}

// Stop terminates every node that runs, all at once (SIGTERM, then
// SIGKILL after 5 s), and closes the admin clients. Safe to call twice.
func (c *Cluster) Stop() error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = n.stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// node is the node at addr, or nil.
func (c *Cluster) node(addr string) *node {
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// live lists the nodes that run.
func (c *Cluster) live() []*node {
	var out []*node
	for _, n := range c.nodes {
		if n.proc != nil {
			out = append(out, n)
		}
	}
	return out
}
