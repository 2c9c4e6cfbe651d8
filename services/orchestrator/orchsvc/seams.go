package orchsvc

import (
	"context"

	"github.com/braidhq/braid/pkg/eventbus"
)

// The orchestrator's side of its seams (DESIGN.md, Seams). The bus is
// taken through the contract's interfaces, whose rules
// eventbustest.RunConformance checks on every implementation. The store is
// a redis.UniversalClient plus statestore.Keys: the batch queues the
// statestore scripts on its own pipelines (gather, write) so that a
// batch of any number of runs costs one round trip per step, which a
// method-per-operation interface would hide; the scripts' rules are
// statestoretest.RunConformance's.

// consumer is the orchestrator's member of its consumer group.
type consumer interface {
	eventbus.Fetcher
	eventbus.OffsetCommitter
	Close() error
}

// producer sends the batch's follow-ups and the scheduler's starts (which
// need only its publisher side).
type producer interface {
	eventbus.Publisher
	Close() error
}

// publisher is what the scheduler needs of the bus.
type publisher interface {
	Publish(ctx context.Context, msgs ...eventbus.Message) error
}
