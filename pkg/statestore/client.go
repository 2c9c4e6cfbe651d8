package statestore

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster URL schemes: BRAID_REDIS_URL names a Redis Cluster when its
// scheme is one of these, or when it lists several host:port seeds
// separated by commas (redis://:pass@h1:7000,h2:7001,h3:7002).
const (
	clusterScheme    = "redis-cluster"
	clusterTLSScheme = "rediss-cluster"
)

// ClusterStateReload is how often a cluster client re-reads the slot map.
// go-redis re-reads it on MOVED and ASK replies and at this interval, not
// when a master stops answering: with its default (60 s) a client kept
// sending a failed master's slots to the dead node for 58 s after its
// replica had taken over (measured on a 3+3 cluster of redis-server 7.0).
// A reload is one CLUSTER SLOTS round trip.
const ClusterStateReload = time.Second

// errBadURL is the error for a URL that does not parse. It never shows the
// URL: it could hold the password.
var errBadURL = errors.New("BRAID_REDIS_URL is not a valid redis://, rediss://, redis-cluster:// or rediss-cluster:// URL (the details are not shown: they could hold the password)")

// NewClient connects to the Redis at url with ContextTimeoutEnabled so
// that context deadlines bound every command, and checks it answers PING
// within timeout. url is one of
//
//	redis://[user:pass@]host:port/db      one server (rediss:// for TLS)
//	redis-cluster://[user:pass@]host:port[,host:port…]   a Redis Cluster
//	redis://[user:pass@]host:port,host:port[,…]          the same
//
// (rediss-cluster:// for a cluster over TLS). The cluster's addresses are
// seeds: the client learns the other nodes and the slot map from them, and
// follows MOVED/ASK redirects and failovers. A cluster has database 0 only.
//
// roots, when not nil, are the CAs a TLS server's certificate is verified
// against instead of the system's (BRAID_REDIS_TLS_CA_FILE); with a URL
// without TLS they are an error, not silently unused.
func NewClient(ctx context.Context, url string, timeout time.Duration, roots ...*x509.CertPool) (redis.UniversalClient, error) {
	var pool *x509.CertPool
	if len(roots) > 0 {
		pool = roots[0]
	}
	rdb, where, err := newUniversal(url, pool)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("ping redis %s: %w", where, err)
	}
	return rdb, nil
}

// newUniversal builds the client url names and says where it points (the
// address, or the cluster's seeds) for errors.
func newUniversal(url string, roots *x509.CertPool) (redis.UniversalClient, string, error) {
	if c, ok, err := clusterURL(url); ok {
		if err != nil {
			return nil, "", err
		}
		opt, err := redis.ParseClusterURL(c)
		if err != nil {
			return nil, "", errBadURL
		}
		opt.ContextTimeoutEnabled = true
		opt.ClusterStateReloadInterval = ClusterStateReload
		if err := withRoots(opt.TLSConfig != nil, roots, func() { opt.TLSConfig.RootCAs = roots }); err != nil {
			return nil, "", err
		}
		return redis.NewClusterClient(opt), "cluster " + strings.Join(opt.Addrs, ","), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", errBadURL
	}
	opt.ContextTimeoutEnabled = true
	if err := withRoots(opt.TLSConfig != nil, roots, func() { opt.TLSConfig.RootCAs = roots }); err != nil {
		return nil, "", err
	}
	return redis.NewClient(opt), opt.Addr, nil
}

// withRoots applies a configured CA pool (set) when the URL uses TLS, and
// refuses one that would go unused.
func withRoots(tls bool, roots *x509.CertPool, set func()) error {
	switch {
	case roots == nil:
		return nil
	case !tls:
		return fmt.Errorf("a Redis CA is configured but the URL is not rediss:// or rediss-cluster:// (TLS)")
	}
	set()
	return nil
}

// IsClusterURL reports whether url names a Redis Cluster (see NewClient).
func IsClusterURL(url string) bool {
	_, ok, _ := clusterURL(url)
	return ok
}

// errClusterDB refuses a cluster URL naming a database other than 0.
var errClusterDB = errors.New("BRAID_REDIS_URL names a Redis Cluster with a database other than 0; a cluster has database 0 only")

// clusterURL rewrites a cluster URL into the form go-redis's
// ParseClusterURL reads (redis[s]://userinfo@first-seed?addr=…&addr=…);
// false when url names one server.
func clusterURL(url string) (string, bool, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return "", false, nil
	}
	named := scheme == clusterScheme || scheme == clusterTLSScheme
	userinfo, hostpart := "", rest
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		userinfo, hostpart = rest[:i+1], rest[i+1:]
	}
	hosts, tail := hostpart, ""
	if i := strings.IndexAny(hostpart, "/?"); i >= 0 {
		hosts, tail = hostpart[:i], hostpart[i:]
	}
	seeds := strings.Split(hosts, ",")
	if !named && len(seeds) < 2 {
		return "", false, nil
	}
	switch scheme {
	case clusterScheme:
		scheme = "redis"
	case clusterTLSScheme:
		scheme = "rediss"
	}
	path, query, _ := strings.Cut(tail, "?")
	if path != "" && path != "/" && path != "/0" {
		return "", true, errClusterDB
	}
	params := make([]string, 0, len(seeds)-1)
	for _, s := range seeds[1:] {
		params = append(params, "addr="+s)
	}
	if query != "" {
		params = append(params, query)
	}
	out := scheme + "://" + userinfo + seeds[0]
	if len(params) > 0 {
		out += "?" + strings.Join(params, "&")
	}
	return out, true, nil
}

// Addrs lists the host:port of every server url names: the one server, or
// a cluster's seeds (port 6379 where none is given); nil for a URL that
// does not parse or names a unix socket. The worker's egress guard keeps
// tasks off them.
func Addrs(url string) []string {
	if c, ok, err := clusterURL(url); ok {
		opt, perr := redis.ParseClusterURL(c)
		if err != nil || perr != nil {
			return nil
		}
		return opt.Addrs
	}
	opt, err := redis.ParseURL(url)
	if err != nil || opt.Network == "unix" {
		return nil
	}
	return []string{opt.Addr}
}
