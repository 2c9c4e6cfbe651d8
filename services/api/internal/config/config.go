// Package config reads the api service's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import "github.com/braidhq/braid/pkg/envconf"

// DefaultMaxBody is the default request body limit in bytes (2 MiB).
const DefaultMaxBody = 2 << 20

// DefaultMaxWaiters is the default bound on requests waiting for runs to end (?wait=).
const DefaultMaxWaiters = 10000

// Defaults of the per-client limits (see apisvc.Config for what each bounds).
const (
	DefaultRateLimit        = 10000 // requests/s per API key
	DefaultMaxStreamsPerKey = 100
	DefaultMaxWaitersPerKey = 1000
)

// Config is the api service's environment.
type Config struct {
	envconf.Common
	Addr    string // BRAID_API_ADDR, host:port to listen on; default 127.0.0.1:8080
	APIKeys string // BRAID_API_KEYS, "name:key:role[,name:key:role]"; never logged
	AuthOff bool   // BRAID_AUTH=off disables authentication (development only)
	MaxBody int64  // BRAID_API_MAX_BODY, request body limit in bytes; default 2 MiB
	// MaxWaiters is BRAID_API_MAX_WAITERS: how many requests may wait for
	// runs to end (?wait=) at once; default 10000.
	MaxWaiters int
	// RateLimit is BRAID_API_RATE_LIMIT, requests per second per API key
	// (per client address without one); 0 turns it off; default 10000.
	RateLimit int
	// RateBurst is BRAID_API_RATE_BURST, requests a client may send at once
	// after idling; 0 (the default) means twice RateLimit.
	RateBurst int
	// MaxStreamsPerKey is BRAID_API_MAX_STREAMS_PER_KEY, SSE streams one key
	// holds open at once; 0 turns it off; default 100.
	MaxStreamsPerKey int
	// MaxWaitersPerKey is BRAID_API_MAX_WAITERS_PER_KEY, requests of one key
	// waiting for runs at once; 0 turns it off; default 1000.
	MaxWaitersPerKey int
	// ShellKeys is BRAID_API_SHELL_KEYS: the names of the keys that may
	// register workflows using the shell handler. Unset: every write key;
	// "none": no key.
	ShellKeys []string
}

// Load reads the environment, reporting every malformed variable at once.
// It does not check BRAID_API_KEYS beyond reading it: apisvc parses the keys
// and reports what is wrong without echoing them.
func Load() (Config, error) {
	r := envconf.New()
	c := Config{
		Common:  r.Common(),
		Addr:    r.String("BRAID_API_ADDR", "127.0.0.1:8080"),
		APIKeys: r.String("BRAID_API_KEYS", ""),
		AuthOff: !r.Bool("BRAID_AUTH", true),
		MaxBody: int64(r.PositiveInt("BRAID_API_MAX_BODY", DefaultMaxBody)),

		MaxWaiters: r.PositiveInt("BRAID_API_MAX_WAITERS", DefaultMaxWaiters),

		RateLimit:        r.NonNegativeInt("BRAID_API_RATE_LIMIT", DefaultRateLimit),
		RateBurst:        r.NonNegativeInt("BRAID_API_RATE_BURST", 0),
		MaxStreamsPerKey: r.NonNegativeInt("BRAID_API_MAX_STREAMS_PER_KEY", DefaultMaxStreamsPerKey),
		MaxWaitersPerKey: r.NonNegativeInt("BRAID_API_MAX_WAITERS_PER_KEY", DefaultMaxWaitersPerKey),
		ShellKeys:        shellKeys(r.List("BRAID_API_SHELL_KEYS", "")),
	}
	return c, r.Err()
}

// shellKeys is BRAID_API_SHELL_KEYS as apisvc.Config.ShellKeys: nil (every
// write key) when unset, empty (no key) for "none".
func shellKeys(names []string) []string {
	if len(names) == 1 && names[0] == "none" {
		return []string{}
	}
	return names
}
