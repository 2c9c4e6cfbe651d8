package eventbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/stretchr/testify/require"
)

// part builds a partition of topic/id led by leader with one chunk per
// size in sizes (bytes), each holding one record.
func part(topic string, id, leader int, sizes ...int) *partition {
	p := &partition{topic: topic, id: id, leader: leader}
	for _, n := range sizes {
		p.chunks = append(p.chunks, &chunk{part: p, records: make([]kafka.Message, 1), bytes: n})
	}
	return p
}

// layoutOf describes seqs as "leader:topic/partition+topic/partition" per
// request, requests of one sequence joined by " then ".
func layoutOf(seqs []sequence) []string {
	var out []string
	for _, seq := range seqs {
		var reqs []string
		for _, r := range seq {
			var cs []string
			for _, c := range r.chunks {
				cs = append(cs, fmt.Sprintf("%s/%d", c.part.topic, c.part.id))
			}
			reqs = append(reqs, fmt.Sprintf("%d:%s", r.leader, strings.Join(cs, "+")))
		}
		out = append(out, strings.Join(reqs, " then "))
	}
	return out
}

func TestPlan(t *testing.T) {
	t.Parallel()
	const limit = maxRequestBytes
	tests := []struct {
		name  string
		parts []*partition
		want  []string
	}{
		{
			name:  "one leader, many topics and partitions: one request",
			parts: []*partition{part("a", 0, 1, 10), part("b", 3, 1, 10), part("a", 2, 1, 10), part("c", 0, 1, 10)},
			want:  []string{"1:a/0+b/3+a/2+c/0"},
		},
		{
			name:  "two leaders: one request each",
			parts: []*partition{part("a", 0, 1, 10), part("a", 1, 2, 10), part("b", 0, 2, 10), part("b", 1, 1, 10)},
			want:  []string{"1:a/0+b/1", "2:a/1+b/0"},
		},
		{
			name:  "partitions over the bound: split between whole partitions",
			parts: []*partition{part("a", 0, 1, limit/2), part("a", 1, 1, limit/2), part("a", 2, 1, limit/2), part("b", 0, 1, 1)},
			want:  []string{"1:a/0+a/1", "1:a/2+b/0"},
		},
		{
			name:  "a partition bigger than a request: its parts in sequence, the rest apart",
			parts: []*partition{part("a", 0, 1, limit, limit, 5), part("b", 0, 1, 10), part("b", 1, 2, 10)},
			want:  []string{"1:a/0 then 1:a/0 then 1:a/0", "1:b/0", "2:b/1"},
		},
		{
			name:  "one record bigger than the bound: a request of its own",
			parts: []*partition{part("a", 0, 1, 10), part("a", 1, 1, limit+100), part("a", 2, 1, 10)},
			want:  []string{"1:a/0", "1:a/1", "1:a/2"},
		},
		{
			name:  "nothing",
			parts: nil,
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seqs := plan(tt.parts)
			require.Equal(t, tt.want, layoutOf(seqs))
			for _, seq := range seqs {
				for _, r := range seq {
					sum := 0
					for _, c := range r.chunks {
						sum += c.bytes
					}
					require.Equal(t, sum, r.bytes)
				}
			}
		})
	}
}

// TestProduceRequest: one entry per topic, one record set per partition,
// acks all, the given timeout.
func TestProduceRequest(t *testing.T) {
	t.Parallel()
	r := &request{leader: 1}
	for _, p := range []*partition{part("a", 0, 1, 10), part("b", 2, 1, 10), part("a", 4, 1, 10)} {
		r.chunks = append(r.chunks, p.chunks...)
	}
	req := r.produceRequest(1234)
	require.Equal(t, int16(-1), req.Acks)
	require.Equal(t, int32(1234), req.Timeout)
	require.Len(t, req.Topics, 2)
	require.Equal(t, "a", req.Topics[0].Topic)
	require.Equal(t, []int32{0, 4}, []int32{req.Topics[0].Partitions[0].Partition, req.Topics[0].Partitions[1].Partition})
	require.Equal(t, "b", req.Topics[1].Topic)
	require.Len(t, req.Topics[1].Partitions, 1)
	require.Equal(t, int32(2), req.Topics[1].Partitions[0].Partition)
}

// checked runs r.check on resp and returns the failures it recorded.
func checked(r *request, resp protocol.Message) error {
	r.check(resp)
	var errs []error
	for _, c := range r.chunks {
		if !c.acked {
			errs = append(errs, c.failure())
		}
	}
	return errors.Join(errs...)
}

// TestCheck: the error names each partition not acknowledged (refused,
// records refused, or missing from the answer) with its record count, and
// no partition that was acknowledged.
func TestCheck(t *testing.T) {
	t.Parallel()
	r := &request{leader: 1}
	for _, p := range []*partition{part("ok", 0, 1, 10), part("refused", 1, 1, 10), part("records", 2, 1, 10), part("missing", 3, 1, 10)} {
		r.chunks = append(r.chunks, p.chunks...)
	}
	resp := &produce.Response{Topics: []produce.ResponseTopic{
		{Topic: "ok", Partitions: []produce.ResponsePartition{{Partition: 0}}},
		{Topic: "refused", Partitions: []produce.ResponsePartition{{Partition: 1, ErrorCode: int16(kafka.MessageSizeTooLarge)}}},
		{Topic: "records", Partitions: []produce.ResponsePartition{{Partition: 2, ErrorCode: int16(kafka.InvalidRecord),
			RecordErrors: []produce.ResponseError{{BatchIndex: 0, BatchIndexErrorMessage: "bad key"}}}}},
	}}
	err := checked(r, resp)
	require.ErrorIs(t, err, kafka.MessageSizeTooLarge)
	require.ErrorIs(t, err, kafka.InvalidRecord)
	msg := err.Error()
	require.Contains(t, msg, "publish 1 records topic=refused partition=1")
	require.Contains(t, msg, "publish 1 records topic=records partition=2")
	require.Contains(t, msg, "bad key")
	require.Contains(t, msg, "publish 1 records topic=missing partition=3: no answer")
	require.NotContains(t, msg, "topic=ok")

	require.NoError(t, checked(&request{chunks: r.chunks[:1]}, resp))
	require.ErrorContains(t, checked(r, &produce.Request{}), "unexpected answer")
}

// TestChunkFailureKeepsTheCauseOfACutTry: a chunk whose last try was cut
// short by the call's deadline reports the broker's error of the try
// before it too, so a Publish that gave up says why (NOT_LEADER), not only
// that time ran out; a deadline alone, or a broker error alone, is
// reported as it is.
func TestChunkFailureKeepsTheCauseOfACutTry(t *testing.T) {
	c := &chunk{part: &partition{topic: "t", id: 3}, records: make([]kafka.Message, 2)}
	c.setOutcome(fmt.Errorf("leader=1: %w", kafka.NotLeaderForPartition))
	c.setOutcome(fmt.Errorf("leader=2: %w", context.DeadlineExceeded))
	err := c.failure()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, kafka.NotLeaderForPartition)
	require.ErrorContains(t, err, "publish 2 records topic=t partition=3: leader=2: context deadline exceeded (the try before: leader=1: [6] Not Leader For Partition")

	only := &chunk{part: &partition{topic: "t", id: 0}, records: make([]kafka.Message, 1)}
	only.setOutcome(context.DeadlineExceeded)
	require.EqualError(t, only.failure(), "publish 1 records topic=t partition=0: context deadline exceeded")
	only.setOutcome(kafka.MessageSizeTooLarge)
	require.NotContains(t, only.failure().Error(), "the try before", "the last error is the broker's own")
	only.setOutcome(nil)
	require.True(t, only.acked)
}

// TestPlannedChunksAreAllocatedOnce: plan counts records into chunks
// exactly as add cuts them, so each chunk's records are allocated once at
// their final size; without a plan add cuts the same chunks.
func TestPlannedChunksAreAllocatedOnce(t *testing.T) {
	t.Parallel()
	sizes := []int{10, maxRequestBytes - 20, 10, 1, maxRequestBytes + 5, 3, 4}
	for range 500 {
		sizes = append(sizes, 2000)
	}
	planned, unplanned := &partition{}, &partition{}
	for _, n := range sizes {
		planned.plan(n)
	}
	for i, n := range sizes {
		r := kafka.Message{Offset: int64(i)}
		planned.add(r, n)
		unplanned.add(r, n)
	}
	require.Len(t, planned.chunks, len(planned.sizes))
	require.Len(t, unplanned.chunks, len(planned.chunks))
	for i, c := range planned.chunks {
		require.Equal(t, planned.sizes[i], len(c.records), "chunk %d", i)
		require.Equal(t, len(c.records), cap(c.records), "chunk %d grew", i)
		require.Equal(t, unplanned.chunks[i].records, c.records, "chunk %d", i)
		require.Equal(t, unplanned.chunks[i].bytes, c.bytes, "chunk %d", i)
	}
	require.Len(t, planned.chunks, 5, "10, limit-20, 10 | 1 | limit+5 | 3, 4 and 460 of 2,000 | 40 of 2,000")
}
