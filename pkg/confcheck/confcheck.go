// Package confcheck holds the checks every Config constructor (worker,
// orchestrator, api) makes of the settings it is given, whether they came
// from the environment (pkg/envconf) or from code that composes the
// services (braid dev, the e2e suite). Each returns nil when the setting is
// fine, so a constructor appends every result and reports them all at once
// with errors.Join, which skips the nils. It imports only the standard
// library: the worker SDK uses it and must not pull in envconf's Kafka SASL.
package confcheck

import (
	"fmt"
	"time"
)

// Required reports a dependency a Config must be given (a Redis client, the
// brokers): "<name> is required" when missing is true.
func Required(name string, missing bool) error {
	if missing {
		return fmt.Errorf("%s is required", name)
	}
	return nil
}

// Positive reports a count, size or period that must be above zero:
// "<name> must be positive, got <v>" when it is not.
func Positive[T int | int64 | time.Duration](name string, v T) error {
	if v <= 0 {
		return fmt.Errorf("%s must be positive, got %v", name, v)
	}
	return nil
}
