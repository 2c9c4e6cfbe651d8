package statestore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fields of the WorkflowMeta hash. The first three are written by PutWorkflow.
const (
	metaLatest  = "latest"
	metaCreated = "created"
	metaUpdated = "updated"
	// metaDeleted holds the deletion time (ms) of a deleted workflow. A deleted
	// workflow keeps its versions, so runs that pinned one keep working, but it
	// is out of the Workflows index and accepts no new runs until a new
	// version is registered.
	metaDeleted = "deleted"
)

// WorkflowInfo is the metadata of a registered workflow.
type WorkflowInfo struct {
	Name    string
	Latest  int       // latest version number
	Created time.Time // first registration
	Updated time.Time // latest registration
	Deleted bool      // deleted with DeleteWorkflow and not registered since
}

// RegisterWorkflow stores def as the next version of workflow name, like
// PutWorkflow, and undoes an earlier DeleteWorkflow of that name.
func (k Keys) RegisterWorkflow(ctx context.Context, rdb redis.Cmdable, name string, def []byte, now time.Time) (int, error) {
	v, err := k.PutWorkflow(ctx, rdb, name, def, now)
	if err != nil {
		return 0, err
	}
	if err := rdb.HDel(ctx, k.WorkflowMeta(name), metaDeleted).Err(); err != nil {
		return 0, fmt.Errorf("undelete workflow %s: %w", name, err)
	}
	return v, nil
}

// WorkflowInfos reads the metadata of each named workflow in one round trip.
// A workflow that was never registered comes back with Latest 0.
func (k Keys) WorkflowInfos(ctx context.Context, rdb redis.Cmdable, names ...string) ([]WorkflowInfo, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(names))
	for i, n := range names {
		cmds[i] = pipe.HGetAll(ctx, k.WorkflowMeta(n))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read workflow metadata %v: %w", names, err)
	}
	out := make([]WorkflowInfo, len(names))
	for i, n := range names {
		out[i] = workflowInfoOf(n, cmds[i].Val())
	}
	return out, nil
}

// workflowInfoOf reads workflow name's metadata hash m.
func workflowInfoOf(name string, m map[string]string) WorkflowInfo {
	latest, _ := strconv.Atoi(m[metaLatest])
	return WorkflowInfo{
		Name: name, Latest: latest, Deleted: m[metaDeleted] != "",
		Created: msTime(m[metaCreated]), Updated: msTime(m[metaUpdated]),
	}
}

// LiveWorkflow returns the metadata of workflow name, or an error wrapping
// ErrNotFound when it was never registered or is deleted.
func (k Keys) LiveWorkflow(ctx context.Context, rdb redis.Cmdable, name string) (WorkflowInfo, error) {
	infos, err := k.WorkflowInfos(ctx, rdb, name)
	if err != nil {
		return WorkflowInfo{}, err
	}
	if infos[0].Latest == 0 || infos[0].Deleted {
		return WorkflowInfo{}, fmt.Errorf("workflow %s: %w", name, ErrNotFound)
	}
	return infos[0], nil
}

// WorkflowVersionNumbers lists the stored versions of workflow name, newest first.
func (k Keys) WorkflowVersionNumbers(ctx context.Context, rdb redis.Cmdable, name string) ([]int, error) {
	fields, err := rdb.HKeys(ctx, k.WorkflowVersions(name)).Result()
	if err != nil {
		return nil, fmt.Errorf("list versions of workflow %s: %w", name, err)
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		if v, err := strconv.Atoi(f); err == nil {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b int) int { return b - a })
	return out, nil
}

// DeleteWorkflow removes workflow name from the Workflows index and marks it
// deleted; its versions stay, so existing runs are unaffected. It returns an
// error wrapping ErrNotFound when the workflow does not exist or is already
// deleted.
func (k Keys) DeleteWorkflow(ctx context.Context, rdb redis.Cmdable, name string, now time.Time) error {
	if _, err := k.LiveWorkflow(ctx, rdb, name); err != nil {
		return fmt.Errorf("delete %w", err)
	}
	pipe := rdb.Pipeline()
	pipe.HSet(ctx, k.WorkflowMeta(name), metaDeleted, now.UnixMilli())
	pipe.ZRem(ctx, k.Workflows(), name)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("delete workflow %s: %w", name, err)
	}
	return nil
}

// msTime parses Unix milliseconds; empty or malformed gives the zero time.
func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}
