package handler

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/itchyny/gojq"
)

// jqCacheSize bounds how many compiled jq programs a transform handler keeps.
const jqCacheSize = 512

// jqCache maps jq expressions to compiled programs. When it holds max
// entries it is emptied before the next insert: expressions come from
// workflow definitions, so the working set is small and refills quickly.
// It is safe for concurrent use.
type jqCache struct {
	m   sync.Map // string → *gojq.Code
	n   atomic.Int64
	max int64
}

func newJQCache(size int) *jqCache { return &jqCache{max: int64(size)} }

// compile returns the program for expr, compiling and caching it on a miss.
// Parse and compile errors are returned as is and not cached.
func (c *jqCache) compile(expr string) (*gojq.Code, error) {
	if code, ok := c.m.Load(expr); ok {
		return code.(*gojq.Code), nil
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("parse jq %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("compile jq %q: %w", expr, err)
	}
	if c.n.Load() >= c.max {
		c.m.Clear()
		c.n.Store(0)
	}
	if _, loaded := c.m.LoadOrStore(expr, code); !loaded {
		c.n.Add(1)
	}
	return code, nil
}

// len reports the number of cached programs (approximate under concurrency).
func (c *jqCache) len() int { return int(c.n.Load()) }
