package apisvc

import (
	"context"

	"github.com/braidhq/braid/pkg/eventbus"
)

// publisher is what the api needs of the event bus (*eventbus.Producer
// meets it): Publish for run starts and controls, and Close at shutdown.
// The api answers 202 only once Publish returned nil, which
// eventbus.Publisher's contract (checked by eventbustest) defines as
// "acknowledged by the broker"; on error it undoes what it wrote and
// answers 503. It never dead-letters, so it does not ask for DeadLetter.
type publisher interface {
	Publish(ctx context.Context, msgs ...eventbus.Message) error
	Close() error
}
