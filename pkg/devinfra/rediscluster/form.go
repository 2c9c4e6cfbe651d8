package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
)

// clusterPoll is the pause between two looks at the cluster's state.
const clusterPoll = 50 * time.Millisecond

// slots is a contiguous range of hash slots, both ends included.
type slots struct{ lo, hi int }

// slotRange is the i-th of masters contiguous ranges of the slots, the
// range master i is given at start-up.
func slotRange(i, masters int) slots {
	return slots{lo: i * statestore.SlotCount / masters, hi: (i+1)*statestore.SlotCount/masters - 1}
}

// form builds the cluster from empty nodes: the first Masters get the
// slots, all meet, and replica j (the nodes after the masters, in order)
// replicates master j mod Masters; then it waits until the cluster is
// healthy.
func (c *Cluster) form(ctx context.Context) error {
	m := c.cfg.Masters
	for i, n := range c.nodes[:m] {
		r := slotRange(i, m)
		if err := n.admin.ClusterAddSlotsRange(ctx, r.lo, r.hi).Err(); err != nil {
			return fmt.Errorf("node %s: add slots %d-%d: %w", n.addr, r.lo, r.hi, err)
		}
	}
	first := c.nodes[0]
	for _, n := range c.nodes[1:] {
		host, port, _ := net.SplitHostPort(n.addr)
		if err := first.admin.Do(ctx, "cluster", "meet", host, port, n.busPort).Err(); err != nil {
			return fmt.Errorf("node %s: meet %s: %w", first.addr, n.addr, err)
		}
	}
	if err := waitFor(ctx, "every node to know every other", c.allMet); err != nil {
		return err
	}
	for j, r := range c.nodes[m:] {
		if err := c.replicate(ctx, r, c.nodes[j%m]); err != nil {
			return err
		}
	}
	return c.waitHealthy(ctx)
}

// replicate makes r a replica of m.
func (c *Cluster) replicate(ctx context.Context, r, m *node) error {
	id, err := m.admin.ClusterMyID(ctx).Result()
	if err != nil {
		return fmt.Errorf("node %s: cluster myid: %w", m.addr, err)
	}
	err = waitFor(ctx, "replica "+r.addr+" to accept master "+m.addr, func(ctx context.Context) error {
		return r.admin.ClusterReplicate(ctx, id).Err()
	})
	return err
}

// allMet says whether every node lists all the others as full members
// (no handshake still under way).
func (c *Cluster) allMet(ctx context.Context) error {
	for _, n := range c.nodes {
		view, err := n.view(ctx)
		if err != nil {
			return err
		}
		if len(view) != len(c.nodes) {
			return fmt.Errorf("node %s knows %d nodes, want %d", n.addr, len(view), len(c.nodes))
		}
		for _, v := range view {
			if v.has("handshake") || v.has("noaddr") {
				return fmt.Errorf("node %s: %s is %v", n.addr, v.addr, v.flags)
			}
		}
	}
	return nil
}

// waitHealthy waits until healthy holds or ctx ends.
func (c *Cluster) waitHealthy(ctx context.Context) error {
	return waitFor(ctx, "the cluster to be healthy", c.healthy)
}

// healthy says whether every live node says cluster_state:ok with every
// slot served, sees every live node as connected and not failing, agrees
// with the others on which nodes serve slots, and, when every node runs,
// sees a replica for every master that has slots; and whether every live
// replica's link to its master is up and synced.
func (c *Cluster) healthy(ctx context.Context) error {
	live := c.live()
	var masters []string
	for i, n := range live {
		if err := n.clusterOK(ctx); err != nil {
			return err
		}
		view, err := n.view(ctx)
		if err != nil {
			return err
		}
		if err := view.sees(live); err != nil {
			return fmt.Errorf("node %s: %w", n.addr, err)
		}
		if i == 0 {
			masters = view.slotMasters()
		} else if m := view.slotMasters(); !slices.Equal(m, masters) {
			return fmt.Errorf("node %s sees masters %v, node %s sees %v", n.addr, m, live[0].addr, masters)
		}
		if len(live) == len(c.nodes) {
			if err := view.replicated(c.cfg.ReplicasPerMaster); err != nil {
				return fmt.Errorf("node %s: %w", n.addr, err)
			}
		}
		if err := n.replicaSynced(ctx, view); err != nil {
			return err
		}
	}
	return nil
}

// slotOwner is the node that serves slot as a live node sees it.
func (c *Cluster) slotOwner(ctx context.Context, slot int) (*node, error) {
	live := c.live()
	if len(live) == 0 {
		return nil, errors.New("no node runs")
	}
	addr, err := live[0].slotMaster(ctx, slot)
	if err != nil {
		return nil, err
	}
	n := c.node(addr)
	if n == nil || n.proc == nil {
		return nil, fmt.Errorf("slot %d is served by %s, not a live node of this cluster", slot, addr)
	}
	return n, nil
}

// waitFailover waits until every live node says cluster_state:ok and
// names a live node other than killed as slot's master.
func (c *Cluster) waitFailover(ctx context.Context, slot int, killed string) error {
	return waitFor(ctx, "a replica to take over from "+killed, func(ctx context.Context) error {
		for _, n := range c.live() {
			if err := n.clusterOK(ctx); err != nil {
				return err
			}
			owner, err := n.slotMaster(ctx, slot)
			if err != nil {
				return err
			}
			if o := c.node(owner); owner == killed || o == nil || o.proc == nil {
				return fmt.Errorf("node %s: slot %d still served by %s", n.addr, slot, owner)
			}
		}
		return nil
	})
}

// syncReplicas runs, on every live master with connected replicas, a
// write to a key of its own slots and WAIT for all of those replicas, in
// one pipeline: one connection, so WAIT covers that write and everything
// the master took in before it.
func (c *Cluster) syncReplicas(ctx context.Context) error {
	for _, n := range c.live() {
		if err := n.syncReplicas(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitFor calls cond every clusterPoll until it returns nil or ctx ends;
// the error then names what was awaited and cond's last answer.
func waitFor(ctx context.Context, what string, cond func(ctx context.Context) error) error {
	tick := time.NewTicker(clusterPoll)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := cond(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// hasField says whether INFO-style text holds the line name:value.
func hasField(info, name, value string) bool {
	return infoField(info, name) == value
}

// infoField is the value of name in INFO-style text (name:value lines).
func infoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
