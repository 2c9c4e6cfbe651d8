package apisvc

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/braidhq/braid/pkg/confcheck"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// Defaults applied to zero Config fields.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultMaxBodyBytes    = 2 << 20
	DefaultKeepAlive       = 15 * time.Second
	DefaultSSEBuffer       = 256
	DefaultFeedLinger      = 30 * time.Second
	DefaultMaxWaiters      = 10000
	DefaultWaitRecheck     = time.Second
	DefaultWaitLinger      = 30 * time.Second
	DefaultLogPoll         = 500 * time.Millisecond
	DefaultRequestTimeout  = 10 * time.Second
	DefaultShutdownTimeout = 20 * time.Second
	// DefaultRateLimit is requests per second per client (see
	// Config.RateLimit): above what the project's own benchmark drives
	// through one key, so that it guards against a runaway client without
	// throttling a busy but well-behaved one.
	DefaultRateLimit         = 10000
	DefaultMaxStreamsPerKey  = 100
	DefaultMaxWaitersPerKey  = 1000
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	// NoLimit in RateLimit, MaxStreamsPerKey or MaxWaitersPerKey turns that
	// limit off (zero means the default, as for every field).
	NoLimit = -1
	// ClientID is the api's Kafka client id when Bus.ClientID is empty.
	ClientID = "braid-api"
)

// Config configures an api server. Zero fields take the defaults above.
type Config struct {
	// Addr is where Run listens, host:port. Default 127.0.0.1:8080.
	Addr string
	// APIKeys are the accepted keys (see ParseKeys). At least one is required
	// unless AuthOff.
	APIKeys []APIKey
	// AuthOff serves every endpoint without authentication, as role write
	// (development only; BRAID_AUTH=off).
	AuthOff bool
	// ShellKeys, when not nil, names the only keys that may register a
	// workflow with a shell node (BRAID_API_SHELL_KEYS); empty: none may.
	// Nil: every write key (a write key can run code on the workers).
	// Every name must be one of APIKeys.
	ShellKeys []string
	// Bus is the Kafka configuration; an empty ClientID becomes ClientID.
	Bus eventbus.Config
	// Redis is the state store client (required); the caller closes it.
	Redis redis.UniversalClient
	// Keys builds Redis keys (its Namespace isolates tests and tenants).
	Keys statestore.Keys
	// MaxBodyBytes bounds request bodies, in bytes. Default 2 MiB.
	MaxBodyBytes int64
	// Logger receives request and error logs. Default slog.Default().
	Logger *slog.Logger
	// Metrics is where the api registers its collectors and what /metrics
	// serves. Default (zero): a new registry with the Go and process
	// collectors. `braid dev` passes one registry shared by all services.
	Metrics metrics.Registry
	// KeepAlive is the interval of SSE keep-alive comments. Default 15s.
	KeepAlive time.Duration
	// SSEBuffer is how many events one SSE subscriber may lag behind before
	// it is disconnected. Default 256.
	SSEBuffer int
	// FeedLinger is how long the api keeps reading workflow.events after
	// its last SSE stream of run events closed; it reads the topic only
	// while someone watches. Default 30s.
	FeedLinger time.Duration
	// MaxWaiters bounds the requests waiting for runs to end (?wait=) at
	// once; past it such requests get a 503 with Retry-After. Default 10000.
	MaxWaiters int
	// WaitRecheck is how often a waiting request re-reads its run when no
	// run-ended announcement came (one lost while the subscription
	// reconnected). Default 1s.
	WaitRecheck time.Duration
	// WaitLinger is how long the api stays subscribed to the run-ended
	// channel after its last waiting request left; while nobody is
	// subscribed, orchestrators on one Redis server build no run-ended
	// notices. Default 30s.
	WaitLinger time.Duration
	// LogPoll is how often a followed task log is polled. Default 500ms.
	LogPoll time.Duration
	// RequestTimeout bounds the Redis and Kafka calls of one request. Default 10s.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds the graceful shutdown of Run. Default 20s.
	ShutdownTimeout time.Duration

	// RateLimit is the sustained requests per second one client may send to
	// the authenticated endpoints: a token bucket per API key name, or per
	// client address without one (authentication off, or a missing or wrong
	// key). Over it a request gets a 429 with Retry-After. Default
	// DefaultRateLimit; NoLimit turns rate limiting off.
	RateLimit float64
	// RateBurst is how many requests a client that has been idle may send at
	// once before RateLimit applies. Default twice RateLimit (at least 1).
	RateBurst int
	// MaxStreamsPerKey bounds the SSE streams (run events, followed logs)
	// one client holds open at once; past it a stream request gets a 429.
	// Default DefaultMaxStreamsPerKey (100); NoLimit turns it off.
	MaxStreamsPerKey int
	// MaxWaitersPerKey bounds the requests of one client waiting for runs to
	// end (?wait=) at once, within MaxWaiters; past it they get a 429.
	// Default DefaultMaxWaitersPerKey (1000); NoLimit turns it off.
	MaxWaitersPerKey int

	// ReadHeaderTimeout bounds reading a request's headers. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included; a body
	// still arriving then gets a 408. It does not bound what follows
	// (net/http lifts the read deadline once the request is read), so
	// streams and ?wait= requests are not cut by it. Default 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds a response from the end of its request's headers
	// to its last byte; a ?wait= request gets its wait on top, and each
	// event of an SSE stream gets WriteTimeout of its own, so streams last
	// as long as their client reads them. It must exceed ReadTimeout, or a
	// request whose body came slowly has no time left for its answer (not
	// even its 408). Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its next
	// request. Default 2m.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers, in bytes; past it
	// net/http answers 431 (text, not problem+json). Default 64 KiB.
	MaxHeaderBytes int
}

// errNoKeys explains how to configure keys; it names no key.
var errNoKeys = errors.New("no API keys configured: set BRAID_API_KEYS=name:key:role[,name:key:role] " +
	"(roles read, write), e.g. BRAID_API_KEYS=admin:$(openssl rand -hex 24):write, " +
	"or set BRAID_AUTH=off to serve without authentication (development only)")

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, DefaultAddr)
	c.Bus.ClientID = cmp.Or(c.Bus.ClientID, ClientID)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.KeepAlive = cmp.Or(c.KeepAlive, DefaultKeepAlive)
	c.SSEBuffer = cmp.Or(c.SSEBuffer, DefaultSSEBuffer)
	c.FeedLinger = cmp.Or(c.FeedLinger, DefaultFeedLinger)
	c.MaxWaiters = cmp.Or(c.MaxWaiters, DefaultMaxWaiters)
	c.WaitRecheck = cmp.Or(c.WaitRecheck, DefaultWaitRecheck)
	c.WaitLinger = cmp.Or(c.WaitLinger, DefaultWaitLinger)
	c.LogPoll = cmp.Or(c.LogPoll, DefaultLogPoll)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, DefaultRequestTimeout)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.RateLimit = cmp.Or(c.RateLimit, DefaultRateLimit)
	c.RateBurst = cmp.Or(c.RateBurst, max(1, int(2*c.RateLimit)))
	c.MaxStreamsPerKey = cmp.Or(c.MaxStreamsPerKey, DefaultMaxStreamsPerKey)
	c.MaxWaitersPerKey = cmp.Or(c.MaxWaitersPerKey, DefaultMaxWaitersPerKey)
	c.ReadHeaderTimeout = cmp.Or(c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, DefaultReadTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, DefaultWriteTimeout)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.MaxHeaderBytes = cmp.Or(c.MaxHeaderBytes, DefaultMaxHeaderBytes)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Bus.Logger = cmp.Or(c.Bus.Logger, c.Logger)
	c.Metrics = c.Metrics.OrNew()
	return c
}

// validate reports every invalid field of a defaulted config.
func (c Config) validate() error {
	errs := []error{confcheck.Required("Redis client", c.Redis == nil), confcheck.Required("Bus.Brokers", len(c.Bus.Brokers) == 0)}
	if len(c.APIKeys) == 0 && !c.AuthOff {
		errs = append(errs, errNoKeys)
	}
	if _, err := newKeyring(c.APIKeys); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.checkShellKeys()...)
	errs = append(errs, confcheck.Positive("MaxBodyBytes", c.MaxBodyBytes), confcheck.Positive("KeepAlive", c.KeepAlive),
		confcheck.Positive("SSEBuffer", c.SSEBuffer), confcheck.Positive("FeedLinger", c.FeedLinger), confcheck.Positive("MaxWaiters", c.MaxWaiters),
		confcheck.Positive("WaitRecheck", c.WaitRecheck), confcheck.Positive("WaitLinger", c.WaitLinger), confcheck.Positive("LogPoll", c.LogPoll),
		confcheck.Positive("RequestTimeout", c.RequestTimeout), confcheck.Positive("ShutdownTimeout", c.ShutdownTimeout),
		confcheck.Positive("RateBurst", c.RateBurst), confcheck.Positive("ReadHeaderTimeout", c.ReadHeaderTimeout),
		confcheck.Positive("ReadTimeout", c.ReadTimeout), confcheck.Positive("WriteTimeout", c.WriteTimeout),
		confcheck.Positive("IdleTimeout", c.IdleTimeout), confcheck.Positive("MaxHeaderBytes", c.MaxHeaderBytes))
	if c.WriteTimeout <= c.ReadTimeout {
		errs = append(errs, fmt.Errorf("WriteTimeout (%s) must exceed ReadTimeout (%s)", c.WriteTimeout, c.ReadTimeout))
	}
	errs = append(errs, limitErrs(c)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("api config: %w", err)
	}
	return nil
}

// limitErrs reports the limits that are neither positive nor NoLimit.
func limitErrs(c Config) []error {
	var errs []error
	if c.RateLimit <= 0 && c.RateLimit != NoLimit {
		errs = append(errs, errors.New("RateLimit must be positive or NoLimit"))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxStreamsPerKey", c.MaxStreamsPerKey}, {"MaxWaitersPerKey", c.MaxWaitersPerKey}} {
		if f.v <= 0 && f.v != NoLimit {
			errs = append(errs, fmt.Errorf("%s must be positive or NoLimit", f.name))
		}
	}
	return errs
}

// checkShellKeys reports ShellKeys naming no write key: a typo would
// otherwise lock every writer out of shell without saying why.
func (c Config) checkShellKeys() []error {
	var errs []error
	for _, name := range c.ShellKeys {
		i := slices.IndexFunc(c.APIKeys, func(k APIKey) bool { return k.Name == name })
		switch {
		case i < 0:
			errs = append(errs, fmt.Errorf("ShellKeys (BRAID_API_SHELL_KEYS): no API key is named %q", name))
		case c.APIKeys[i].Role != RoleWrite:
			errs = append(errs, fmt.Errorf("ShellKeys (BRAID_API_SHELL_KEYS): key %q is not a write key", name))
		}
	}
	return errs
}
