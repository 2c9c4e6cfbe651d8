package apisvc

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// defCacheSize bounds the compiled versions kept; the cache is emptied
// when it is full (versions are immutable, so entries never go stale).
const defCacheSize = 512

// defCache compiles each stored workflow version once. Safe for concurrent use.
type defCache struct {
	rdb  redis.UniversalClient
	keys statestore.Keys
	mu   sync.Mutex
	m    map[string]*dag.Graph
}

func newDefCache(rdb redis.UniversalClient, keys statestore.Keys) *defCache {
	return &defCache{rdb: rdb, keys: keys, m: map[string]*dag.Graph{}}
}

// get returns the compiled version of workflow name (errors wrap
// statestore.ErrNotFound when it does not exist).
func (d *defCache) get(ctx context.Context, name string, version int) (*dag.Graph, error) {
	key := name + "@" + strconv.Itoa(version)
	d.mu.Lock()
	g := d.m[key]
	d.mu.Unlock()
	if g != nil {
		return g, nil
	}
	raw, _, err := d.keys.GetWorkflow(ctx, d.rdb, name, version)
	if err != nil {
		return nil, err
	}
	return d.add(name, version, raw)
}

// add compiles raw, the stored definition of version of workflow name,
// and keeps it. Registration calls it with what it stored, so that the
// version's first run does not parse it again (a 10,000-node definition
// takes about 80 ms).
func (d *defCache) add(name string, version int, raw []byte) (*dag.Graph, error) {
	def, err := dag.Parse(raw)
	var g *dag.Graph
	if err == nil {
		g, err = dag.Compile(def)
	}
	if err != nil {
		return nil, fmt.Errorf("stored workflow %s version %d does not compile: %v", name, version, err)
	}
	d.mu.Lock()
	if len(d.m) >= defCacheSize {
		clear(d.m)
	}
	d.m[name+"@"+strconv.Itoa(version)] = g
	d.mu.Unlock()
	return g, nil
}
