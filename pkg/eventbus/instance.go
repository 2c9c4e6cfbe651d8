package eventbus

import (
	"context"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"
)

// instanceSep joins ClientID and InstanceID into a group member's client id.
const instanceSep = "/"

// memberClientID is the client id a Consumer's connections announce: the
// ClientID, followed by the InstanceID when there is one, so that a restarted
// instance can recognise the members its previous incarnation left behind.
func (c Config) memberClientID() string {
	if c.InstanceID == "" {
		return c.ClientID
	}
	return c.ClientID + instanceSep + c.InstanceID
}

// evictPredecessors removes from group the members that carry this
// consumer's own instance client id: a previous incarnation of the same
// instance that was killed without leaving (kill -9, OOM, power loss). Its
// session would otherwise hold its partitions for SessionTimeout, and the
// new member's join would wait for it. It returns how many members it
// evicted. kafka-go has no static membership (group.instance.id), which
// would do the same on the broker's side.
//
// Call it before the consumer joins, so it cannot evict itself. Two live
// processes given the same InstanceID evict each other on every start, which
// costs a rebalance and nothing else: records are committed only after their
// effects are stored, so a partition's next owner redoes at most the
// uncommitted tail.
func evictPredecessors(ctx context.Context, cfg Config, group string) (int, error) {
	if cfg.InstanceID == "" {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.AdminTimeout)
	defer cancel()
	client, done := adminClient(cfg)
	defer done()
	resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return 0, fmt.Errorf("describe group %s: %w", group, err)
	}
	ids := predecessorIDs(resp.Groups, group, cfg.memberClientID())
	if len(ids) == 0 {
		return 0, nil
	}
	req := &kafka.LeaveGroupRequest{GroupID: group, Members: make([]kafka.LeaveGroupRequestMember, len(ids))}
	for i, id := range ids {
		req.Members[i] = kafka.LeaveGroupRequestMember{ID: id}
	}
	lr, err := client.LeaveGroup(ctx, req)
	if err == nil {
		err = lr.Error
	}
	if err != nil {
		return 0, fmt.Errorf("evict %d members of group %s with client id %s: %w", len(ids), group, cfg.memberClientID(), err)
	}
	return len(ids), nil
}

// predecessorIDs returns the member ids of group whose client id is
// clientID.
func predecessorIDs(groups []kafka.DescribeGroupsResponseGroup, group, clientID string) []string {
	var ids []string
	for _, g := range groups {
		if g.GroupID != group || g.Error != nil {
			continue
		}
		for _, m := range g.Members {
			if m.ClientID == clientID && strings.TrimSpace(m.MemberID) != "" {
				ids = append(ids, m.MemberID)
			}
		}
	}
	return ids
}
