package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// errBadDefinition marks a stored definition that no longer compiles.
var errBadDefinition = errors.New("stored definition does not compile")

// planCache compiles each workflow version once. Versions are immutable, so
// entries never go stale.
type planCache struct {
	rdb  redis.Cmdable
	keys statestore.Keys
	mu   sync.Mutex
	m    map[string]*core.Plan
}

func (c *planCache) get(ctx context.Context, name string, version int) (*core.Plan, error) {
	key := name + "@" + strconv.Itoa(version)
	c.mu.Lock()
	p := c.m[key]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	raw, _, err := c.keys.GetWorkflow(ctx, c.rdb, name, version)
	if err != nil {
		return nil, err
	}
	def, err := dag.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %d: %w: %w", name, version, errBadDefinition, err)
	}
	g, err := dag.Compile(def)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %d: %w: %w", name, version, errBadDefinition, err)
	}
	p, err = core.NewPlan(g)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadDefinition, err)
	}
	c.mu.Lock()
	c.m[key] = p
	c.mu.Unlock()
	return p, nil
}
