package orchsvc

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// pipelineLog records, in order, the command names of every pipeline; a
// script call is named by its script ("evalsha:apply").
type pipelineLog struct {
	mu    sync.Mutex
	pipes [][]string
	// heardOnly holds the last argument of every run-ended notice: "1"
	// when it is sent only if someone is subscribed.
	heardOnly []string
}

// scriptNames names the store's scripts by their SHA1.
var scriptNames = statestore.ScriptNames()

func (l *pipelineLog) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (l *pipelineLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (l *pipelineLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
			if args := c.Args(); names[i] == "evalsha" && len(args) > 1 {
				names[i] += ":" + scriptNames[fmt.Sprint(args[1])]
			}
		}
		err := next(ctx, cmds)
		l.mu.Lock()
		l.pipes = append(l.pipes, names)
		for i, c := range cmds {
			if args := c.Args(); names[i] == "evalsha:ended" {
				l.heardOnly = append(l.heardOnly, fmt.Sprint(args[len(args)-1]))
			}
		}
		l.mu.Unlock()
		return err
	}
}

// TestClusterNoticesFollowTheirWrite: on a Redis Cluster the run-ended
// notice is published only after the pipeline holding the run's write
// returned — in the same pipeline go-redis would send it to any node,
// concurrently with the write's — and on one server it rides in that
// pipeline, after the write, and is sent only if someone is subscribed (a
// cluster node counts only its own subscribers, so there it always is).
func TestClusterNoticesFollowTheirWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster := testinfra.StartRedisCluster(t)
	for name, rdb := range map[string]redis.UniversalClient{"cluster": cluster.Client(t), "one server": testinfra.StartRedis(t).Client(t)} {
		t.Run(name, func(t *testing.T) {
			kafka := testinfra.StartKafka(t)
			keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
			_, err := keys.PutWorkflow(ctx, rdb, "wf", []byte(oneNode), time.Now())
			require.NoError(t, err)
			s, err := New(ctx, testConfig(t, rdb, keys, kafka))
			require.NoError(t, err)
			t.Cleanup(func() { s.close(ctx) })
			p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
			_, err = keys.CreatePendingRun(ctx, rdb, p)
			require.NoError(t, err)
			m, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, "r1", p.StartRequest())
			require.NoError(t, err)
			require.NoError(t, s.tryBatch(ctx, []eventbus.Message{m}))

			log := &pipelineLog{}
			rdb.AddHook(log)
			done, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, "r1", &eventsv1.TaskResult{RunId: "r1", NodeId: "a", Attempt: 1,
				Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED, Output: []byte(`{}`), StartedAtMs: time.Now().UnixMilli(), FinishedAtMs: time.Now().UnixMilli()})
			require.NoError(t, err)
			require.NoError(t, s.tryBatch(ctx, []eventbus.Message{done}))
			require.Equal(t, "succeeded", rdb.HGet(ctx, keys.Run("r1"), "status").Val())

			write, notice := -1, -1
			for i, names := range log.pipes {
				if slices.Contains(names, "evalsha:apply") || slices.Contains(names, "evalsha:start") {
					write = max(write, i)
				}
				if slices.Contains(names, "evalsha:ended") && notice < 0 {
					notice = i
				}
			}
			require.GreaterOrEqual(t, write, 0, "no write pipeline: %v", log.pipes)
			require.GreaterOrEqual(t, notice, 0, "no run-ended notice: %v", log.pipes)
			if name == "cluster" {
				require.Greater(t, notice, write, "the notice went out with (or before) the write it announces: %v", log.pipes)
				require.Equal(t, []string{"0"}, log.heardOnly, "on a cluster the notice goes whoever listens")
			} else {
				require.Equal(t, write, notice, "on one server the notice rides in the write's pipeline: %v", log.pipes)
				require.Equal(t, []string{"1"}, log.heardOnly, "on one server the notice is sent only if someone listens")
			}
		})
	}
}
