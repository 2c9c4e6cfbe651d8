// Package config reads the api service's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import "github.com/braidhq/braid/pkg/envconf"

// DefaultMaxBody is the default request body limit in bytes (2 MiB).
const DefaultMaxBody = 2 << 20

// DefaultMaxWaiters is the default bound on requests waiting for runs to end (?wait=).
const DefaultMaxWaiters = 10000

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
	}
	return c, r.Err()
}
