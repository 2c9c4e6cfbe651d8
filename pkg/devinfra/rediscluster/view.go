package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// syncTimeout bounds one WAIT of SyncReplicas.
const syncTimeout = 5 * time.Second

// viewNode is one line of CLUSTER NODES: a node as another one sees it.
type viewNode struct {
	id, addr  string
	flags     []string // myself, master, slave, fail?, fail, handshake, noaddr, ...
	master    string   // the id of a replica's master; "-" for a master
	connected bool     // the cluster bus link is up
	slots     bool     // it serves slots
}

// has says whether v carries flag.
func (v viewNode) has(flag string) bool { return slices.Contains(v.flags, flag) }

// failing says whether v is suspected or known to be down, or not yet a
// full member.
func (v viewNode) failing() bool {
	return v.has("fail?") || v.has("fail") || v.has("handshake") || v.has("noaddr")
}

// clusterView is a node's CLUSTER NODES answer.
type clusterView []viewNode

// parseView reads CLUSTER NODES: id ip:port@cport[,hostname] flags master
// ping-sent pong-recv config-epoch link-state [slot ...].
func parseView(text string) (clusterView, error) {
	var view clusterView
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("cluster nodes line %q: want at least 8 fields", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		view = append(view, viewNode{id: f[0], addr: addr, flags: strings.Split(f[2], ","),
			master: f[3], connected: f[7] == "connected", slots: len(f) > 8})
	}
	return view, nil
}

// myself is the entry of the node that answered.
func (view clusterView) myself() (viewNode, bool) {
	i := slices.IndexFunc(view, func(v viewNode) bool { return v.has("myself") })
	if i < 0 {
		return viewNode{}, false
	}
	return view[i], true
}

// sees says whether view lists every node of live as connected and not failing.
func (view clusterView) sees(live []*node) error {
	for _, n := range live {
		i := slices.IndexFunc(view, func(v viewNode) bool { return v.addr == n.addr })
		switch {
		case i < 0:
			return fmt.Errorf("does not know %s", n.addr)
		case view[i].failing() || !view[i].connected:
			return fmt.Errorf("sees %s as %v, connected=%t", n.addr, view[i].flags, view[i].connected)
		}
	}
	return nil
}

// slotMasters are the sorted addresses of the masters that serve slots.
func (view clusterView) slotMasters() []string {
	var out []string
	for _, v := range view {
		if v.has("master") && v.slots && !v.failing() {
			out = append(out, v.addr)
		}
	}
	slices.Sort(out)
	return out
}

// replicated says whether every master with slots has at least want
// replicas that are not failing.
func (view clusterView) replicated(want int) error {
	for _, m := range view {
		if !m.has("master") || !m.slots {
			continue
		}
		have := 0
		for _, r := range view {
			if r.has("slave") && r.master == m.id && !r.failing() {
				have++
			}
		}
		if have < want {
			return fmt.Errorf("master %s has %d of %d replicas", m.addr, have, want)
		}
	}
	return nil
}

// view is n's CLUSTER NODES.
func (n *node) view(ctx context.Context) (clusterView, error) {
	text, err := n.admin.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("node %s: cluster nodes: %w", n.addr, err)
	}
	return parseView(text)
}

// clusterOK says whether n says cluster_state:ok with every slot served.
func (n *node) clusterOK(ctx context.Context) error {
	info, err := n.admin.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("node %s: cluster info: %w", n.addr, err)
	}
	if !hasField(info, "cluster_state", "ok") || !hasField(info, "cluster_slots_ok", strconv.Itoa(statestore.SlotCount)) {
		return fmt.Errorf("node %s: cluster_state:%s cluster_slots_ok:%s", n.addr,
			infoField(info, "cluster_state"), infoField(info, "cluster_slots_ok"))
	}
	return nil
}

// shard is a master and the slots it serves, as one node sees it.
type shard struct {
	master string // host:port
	slots  []slots
}

// shards are the masters that serve slots as n sees them (CLUSTER SHARDS).
func (n *node) shards(ctx context.Context) ([]shard, error) {
	answer, err := n.admin.ClusterShards(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("node %s: cluster shards: %w", n.addr, err)
	}
	var out []shard
	for _, s := range answer {
		i := slices.IndexFunc(s.Nodes, func(node redis.Node) bool { return node.Role == "master" })
		if i < 0 || len(s.Slots) == 0 {
			continue
		}
		sh := shard{master: net.JoinHostPort(s.Nodes[i].IP, strconv.FormatInt(s.Nodes[i].Port, 10))}
		for _, r := range s.Slots {
			sh.slots = append(sh.slots, slots{lo: int(r.Start), hi: int(r.End)})
		}
		out = append(out, sh)
	}
	return out, nil
}

// slotMaster is the address of slot's master as n sees it.
func (n *node) slotMaster(ctx context.Context, slot int) (string, error) {
	shards, err := n.shards(ctx)
	if err != nil {
		return "", err
	}
	for _, sh := range shards {
		if slices.ContainsFunc(sh.slots, func(r slots) bool { return r.lo <= slot && slot <= r.hi }) {
			return sh.master, nil
		}
	}
	return "", fmt.Errorf("node %s: no master for slot %d", n.addr, slot)
}

// ownSlots are the slot ranges n serves as n sees it.
func (n *node) ownSlots(ctx context.Context) ([]slots, error) {
	shards, err := n.shards(ctx)
	if err != nil {
		return nil, err
	}
	var own []slots
	for _, sh := range shards {
		if sh.master == n.addr {
			own = append(own, sh.slots...)
		}
	}
	return own, nil
}

// replicaSynced says, for a replica (per view, n's own), whether its link
// to its master is up and the initial sync done; a master passes.
func (n *node) replicaSynced(ctx context.Context, view clusterView) error {
	me, ok := view.myself()
	if !ok {
		return fmt.Errorf("node %s: cluster nodes lists no myself", n.addr)
	}
	if !me.has("slave") {
		return nil
	}
	info, err := n.admin.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("node %s: info replication: %w", n.addr, err)
	}
	if !hasField(info, "master_link_status", "up") || !hasField(info, "master_sync_in_progress", "0") {
		return fmt.Errorf("replica %s: master_link_status:%s master_sync_in_progress:%s", n.addr,
			infoField(info, "master_link_status"), infoField(info, "master_sync_in_progress"))
	}
	return nil
}

// syncReplicas makes sure, if n is a master with connected replicas, that
// they all hold everything n acknowledged so far (see SyncReplicas).
func (n *node) syncReplicas(ctx context.Context) error {
	info, err := n.admin.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("node %s: info replication: %w", n.addr, err)
	}
	replicas, _ := strconv.Atoi(infoField(info, "connected_slaves"))
	if !hasField(info, "role", "master") || replicas == 0 {
		return nil
	}
	own, err := n.ownSlots(ctx)
	if err != nil {
		return err
	}
	key, err := keyInSlots("rediscluster:sync:", own)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.addr, err)
	}
	pipe := n.admin.Pipeline()
	pipe.Incr(ctx, key)
	wait := pipe.Do(ctx, "wait", replicas, syncTimeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("node %s: write and wait for %d replicas: %w", n.addr, replicas, err)
	}
	if acked, _ := wait.Int(); acked < replicas {
		return fmt.Errorf("node %s: %d of %d replicas acknowledged within %s", n.addr, acked, replicas, syncTimeout)
	}
	return nil
}

// keySearchBound bounds keyInSlots' search.
const keySearchBound = 1 << 16

// keyInSlots returns prefix{i} for the first i whose slot is in one of ranges.
func keyInSlots(prefix string, ranges []slots) (string, error) {
	for i := range keySearchBound {
		key := prefix + "{" + strconv.Itoa(i) + "}"
		s := statestore.HashSlot(key)
		if slices.ContainsFunc(ranges, func(r slots) bool { return r.lo <= s && s <= r.hi }) {
			return key, nil
		}
	}
	return "", errors.New("no key found for the node's slots")
}
