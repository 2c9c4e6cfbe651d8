package rediscluster

import (
	"context"
	"fmt"
	"time"
)

// Bounds of the failover helpers.
const (
	failoverTimeout = 15 * time.Second // KillMaster, until the replica serves the slots
	rejoinTimeout   = 15 * time.Second // Restart, until the node is a replica in sync
	syncAllTimeout  = 30 * time.Second // SyncReplicas, every master
)

// KillMaster SIGKILLs the node that now serves the i-th range of the
// slots (i in 0..Masters()-1; after a failover that is the promoted
// replica), then waits, within ctx and 15 s, until every surviving node
// says cluster_state:ok and names a live node (the killed one's replica)
// as that range's master. It returns the killed node's address, for
// Restart. That range needs a live replica. Writes the replica had not
// received are lost, as in any failover: acknowledge them with
// SyncReplicas first.
func (c *Cluster) KillMaster(ctx context.Context, i int) (killedAddr string, err error) {
	if i < 0 || i >= c.cfg.Masters {
		return "", fmt.Errorf("kill redis cluster master %d: want 0..%d", i, c.cfg.Masters-1)
	}
	ctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	slot := slotRange(i, c.cfg.Masters).lo
	victim, err := c.slotOwner(ctx, slot)
	if err != nil {
		return "", fmt.Errorf("kill redis cluster master %d: %w", i, err)
	}
	victim.kill()
	if err := c.waitFailover(ctx, slot, victim.addr); err != nil {
		return victim.addr, fmt.Errorf("failover of redis cluster master %s (slots from %d): %w", victim.addr, slot, err)
	}
	return victim.addr, nil
}

// Restart starts the killed node at addr again on its ports and directory
// (its AOF and nodes.conf), and waits, within ctx and 15 s, until it
// rejoined as a replica in sync with its master and every node says
// cluster_state:ok.
func (c *Cluster) Restart(ctx context.Context, addr string) error {
	n := c.node(addr)
	if n == nil || n.proc != nil {
		return fmt.Errorf("restart redis cluster node %s: not a killed node of this cluster", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	if err := n.start(ctx); err != nil {
		return fmt.Errorf("restart redis cluster node %s: %w", addr, err)
	}
	if err := c.waitHealthy(ctx); err != nil {
		return fmt.Errorf("redis cluster node %s did not rejoin: %w", addr, err)
	}
	return nil
}

// SyncReplicas waits, within ctx and 30 s, until every live master's
// replicas hold every write the master acknowledged so far: on each
// master, one write to a key of its own slots followed by WAIT on the same
// connection (the replication stream is ordered, so the earlier writes of
// every client arrived too). Writes synced this way survive KillMaster.
func (c *Cluster) SyncReplicas(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, syncAllTimeout)
	defer cancel()
	if err := c.syncReplicas(ctx); err != nil {
		return fmt.Errorf("sync redis cluster replicas: %w", err)
	}
	return nil
}
