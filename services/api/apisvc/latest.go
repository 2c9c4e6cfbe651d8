package apisvc

import (
	"sync"

	"github.com/braidhq/braid/pkg/statestore"
)

// latestCacheSize bounds the workflows whose latest version is remembered;
// the cache is emptied when it is full.
const latestCacheSize = 4096

// latestCache remembers each workflow's latest version as last read, so
// that a run request need not look it up before writing: the write reads
// the live metadata in the same round trip and refuses a version that is
// no longer the latest (statestore.CreatePendingRunOfLatest), and the
// request then starts over from a fresh lookup. An entry can therefore be
// stale (another api registered a version, or deleted the workflow) without
// a run ever using anything but the live latest version. Safe for
// concurrent use.
type latestCache struct {
	mu sync.Mutex
	m  map[string]statestore.WorkflowInfo
}

func newLatestCache() *latestCache {
	return &latestCache{m: map[string]statestore.WorkflowInfo{}}
}

// get returns what was last read of workflow name.
func (l *latestCache) get(name string) (statestore.WorkflowInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.m[name]
	return info, ok
}

// put remembers info.
func (l *latestCache) put(info statestore.WorkflowInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= latestCacheSize {
		clear(l.m)
	}
	l.m[info.Name] = info
}

// drop forgets workflow name (registered again, or deleted, here).
func (l *latestCache) drop(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, name)
}
