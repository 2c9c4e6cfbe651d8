package eventbus

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestBoundsOf(t *testing.T) {
	t.Parallel()
	entry := func(name, v string) kafka.DescribeConfigResponseConfigEntry {
		return kafka.DescribeConfigResponseConfigEntry{ConfigName: name, ConfigValue: v}
	}
	got := boundsOf([]kafka.DescribeConfigResponseResource{
		{ConfigEntries: []kafka.DescribeConfigResponseConfigEntry{entry(brokerMinSession, "6000"), entry(brokerMaxSession, "300000")}},
		{ConfigEntries: []kafka.DescribeConfigResponseConfigEntry{entry(brokerMinSession, "1000"), entry(brokerMaxSession, "60000")}},
		{ConfigEntries: []kafka.DescribeConfigResponseConfigEntry{entry(brokerMinSession, "junk"), entry(brokerMaxSession, "-5")}},
		{Error: kafka.Unknown, ConfigEntries: []kafka.DescribeConfigResponseConfigEntry{entry(brokerMinSession, "90000")}},
	})
	require.Equal(t, sessionBounds{min: 6 * time.Second, max: time.Minute}, got)

	for _, tc := range []struct {
		b       sessionBounds
		in, out time.Duration
	}{
		{sessionBounds{min: 6 * time.Second}, 3 * time.Second, 6 * time.Second},
		{sessionBounds{min: time.Second, max: 10 * time.Second}, 3 * time.Second, 3 * time.Second},
		{sessionBounds{max: 10 * time.Second}, time.Minute, 10 * time.Second},
		{sessionBounds{}, 3 * time.Second, 3 * time.Second},
	} {
		require.Equal(t, tc.out, tc.b.fit(tc.in), "%+v fit %s", tc.b, tc.in)
	}
}

// TestSessionFitsBroker: against a broker allowing 1 s sessions (the ones
// Braid starts) the default 3-s session is kept; against a stock broker (6 s
// minimum, which would refuse the join) it is raised to 6 s, the heartbeat
// stays below it, and a consumer still joins and receives records.
func TestSessionFitsBroker(t *testing.T) {
	t.Parallel()
	ours := testinfra.StartKafka(t)
	cfg, note := fitSession(testCtx(t), Config{Brokers: []string{ours.Addr}}.withDefaults())
	require.Empty(t, note)
	require.Equal(t, DefaultSessionTimeout, cfg.SessionTimeout)

	stock, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(2))
	require.NoError(t, err)
	t.Cleanup(stock.Close)
	b := bus{cfg: Config{Brokers: stock.ListenAddrs(), TopicPrefix: testinfra.UniqueName(t, "t") + "."}}
	fitted, note := fitSession(testCtx(t), b.cfg.withDefaults())
	require.Equal(t, 6*time.Second, fitted.SessionTimeout)
	require.Less(t, fitted.HeartbeatInterval, fitted.SessionTimeout)
	require.Contains(t, note, "group.min.session.timeout.ms")

	require.NoError(t, EnsureTopics(testCtx(t), b.cfg, eventsv1.TopicTaskComplete))
	c := b.consumer(t, "fit", eventsv1.TopicTaskComplete)
	require.NoError(t, b.producer(t).Publish(testCtx(t), result(t, "run-1", 1)))
	require.Equal(t, 1, attempt(t, fetchN(t, c, 1)[0]))
}

// TestRestartedInstanceEvictsItsGhost: a member of the group that joined
// under this instance's client id and then stopped heartbeating (a killed
// process; its 30-s session would hold every partition) is evicted by the
// restarted instance's Consumer, which then gets the partitions and
// records long before that session could expire.
func TestRestartedInstanceEvictsItsGhost(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	b.cfg.InstanceID = "orch-0"
	group := "ghost"
	ghost := joinGhost(t, b.cfg.withDefaults(), group, b.cfg.topic(eventsv1.TopicTaskComplete))

	start := time.Now()
	c := b.consumer(t, group, eventsv1.TopicTaskComplete)
	require.NoError(t, b.producer(t).Publish(testCtx(t), result(t, "run-1", 7)))
	require.Equal(t, 7, attempt(t, fetchN(t, c, 1)[0]))
	require.Less(t, time.Since(start), ghostSession/2, "the ghost's partitions were not handed over before its session ran out")

	client, done := adminClient(b.cfg.withDefaults())
	defer done()
	resp, err := client.DescribeGroups(testCtx(t), &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	require.NoError(t, err)
	require.Len(t, resp.Groups, 1)
	for _, m := range resp.Groups[0].Members {
		require.NotEqual(t, ghost, m.MemberID, "the ghost is still a member")
	}
}

// ghostSession is the session of the member joinGhost leaves behind.
const ghostSession = 30 * time.Second

// joinGhost joins group as cfg's instance would, takes every partition of
// topic, and never heartbeats: what a process killed after joining leaves.
// It returns the ghost's member id.
func joinGhost(t *testing.T, cfg Config, group, topic string) string {
	t.Helper()
	tr := &kafka.Transport{ClientID: cfg.memberClientID()}
	t.Cleanup(tr.CloseIdleConnections)
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second, Transport: tr}
	req := &kafka.JoinGroupRequest{GroupID: group, SessionTimeout: ghostSession, RebalanceTimeout: ghostSession,
		ProtocolType: "consumer", Protocols: []kafka.GroupProtocol{{Name: "range", Metadata: kafka.GroupProtocolSubscription{Topics: []string{topic}}}}}
	var join *kafka.JoinGroupResponse
	for range 3 { // the first join may ask for a member id (KIP-394)
		var err error
		join, err = client.JoinGroup(testCtx(t), req)
		require.NoError(t, err)
		if join.Error == nil {
			break
		}
		require.ErrorIs(t, join.Error, kafka.MemberIDRequired)
		req.MemberID = join.MemberID
	}
	require.NoError(t, join.Error)
	parts := make([]int, DefaultPartitions)
	for i := range parts {
		parts[i] = i
	}
	sync, err := client.SyncGroup(testCtx(t), &kafka.SyncGroupRequest{GroupID: group, GenerationID: join.GenerationID,
		MemberID: join.MemberID, ProtocolType: "consumer", ProtocolName: "range",
		Assignments: []kafka.SyncGroupRequestAssignment{{MemberID: join.MemberID,
			Assignment: kafka.GroupProtocolAssignment{AssignedPartitions: map[string][]int{topic: parts}}}}})
	require.NoError(t, err)
	require.NoError(t, sync.Error)
	return join.MemberID
}
