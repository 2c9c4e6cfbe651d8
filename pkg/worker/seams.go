package worker

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
)

// claimStore is what the worker's claim path needs of the state store
// (statestore.Store meets it). The rules it relies on — a claim is granted
// to one holder only and refused for an attempt that is not in flight,
// a replayed claim answers the same, a heartbeat refuses a claim taken
// over, a release touches only the caller's claim — are the ones
// statestoretest.RunConformance checks.
//
// The bus side of the path takes eventbus.Fetcher (the fetch loop) and
// eventbus.Publisher (dead letters and results): the worker calls every
// method of both, so it declares no smaller ones.
type claimStore interface {
	ClaimAttempts(ctx context.Context, reqs []statestore.ClaimRequest, worker string) ([]statestore.Claimed, error)
	Heartbeat(ctx context.Context, a statestore.Attempt, worker string, ttl time.Duration) (statestore.ClaimResult, error)
	ReleaseClaim(ctx context.Context, a statestore.Attempt, worker string) error
	RenewLiveness(ctx context.Context, id, incarnation string, ttl time.Duration) (string, error)
}
