// Package eventbustest is the event bus's conformance suite: the rules of
// eventbus.Publisher, eventbus.Fetcher and eventbus.OffsetCommitter stated
// once, in code, for every implementation to pass. pkg/eventbus runs it
// against kfake over TCP; a fake bus in a test, or the same code against
// another broker, runs it the same way:
//
//	func TestConformance(t *testing.T) {
//		eventbustest.RunConformance(t, func(t *testing.T) eventbustest.Harness { ... })
//	}
//
// It imports testing, so only tests may import it; the services' binaries
// never do.
package eventbustest

import (
	"testing"

	"github.com/braidhq/braid/pkg/eventbus"
)

// Consumer is one member of a consumer group as the suite drives it.
type Consumer interface {
	eventbus.Fetcher
	eventbus.OffsetCommitter
	// Close leaves the group without committing anything: closing one
	// member and opening another in the same group is the suite's restart.
	// Safe to call twice.
	Close() error
}

// Harness is one fresh instance of the implementation under test. setup
// builds one per rule, so rules run in parallel and share nothing.
type Harness struct {
	// Publisher writes to the bus. The harness closes it on t.Cleanup.
	Publisher eventbus.Publisher
	// Topic is a logical topic that exists with its dead-letter topic
	// (eventsv1.DLQ(Topic)), that has at least two partitions, and that
	// only this harness writes to.
	Topic string
	// NewConsumer joins group on topics; a new group starts at the earliest
	// record. The suite closes the consumer when it restarts it; the
	// harness closes it on t.Cleanup as well.
	NewConsumer func(t *testing.T, group string, topics ...string) Consumer
	// StopBroker takes the bus away for good (nil: the rule that needs it
	// is skipped).
	StopBroker func()
}

// rule is one subtest of the suite.
type rule struct {
	name string
	run  func(t *testing.T, h Harness)
}

// rules lists the contract, one rule per subtest (the names are what a
// failing run prints).
var rules = []rule{
	{"PublishReturnsAfterAck", testPublishReturnsAfterAck},
	{"PublishFailsWithoutBroker", testPublishFailsWithoutBroker},
	{"FetchDoesNotCommit", testFetchDoesNotCommit},
	{"CommittedIsNotRedelivered", testCommittedIsNotRedelivered},
	{"PerKeyOrder", testPerKeyOrder},
	{"DeadLetter", testDeadLetter},
}

// RunConformance runs every rule of the contract as a parallel subtest,
// each on its own Harness from setup.
func RunConformance(t *testing.T, setup func(t *testing.T) Harness) {
	t.Helper()
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.run(t, setup(t))
		})
	}
}
