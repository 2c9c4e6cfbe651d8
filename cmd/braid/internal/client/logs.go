package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/braidhq/braid/pkg/apiwire"
)

// LogLine is one line of an attempt's log.
type LogLine = apiwire.LogLine

// LogPage is the answer of GET .../logs without follow.
type LogPage = apiwire.LogPage

// errLogEnd stops a followed log at its "end" event.
var errLogEnd = errors.New("log ended")

// Logs returns the log of one attempt of a node, or of instance inst of a
// fan-out node (attempt 0: the latest; inst 0 is every node's first).
func (c *Client) Logs(ctx context.Context, run, node string, inst, attempt int) (LogPage, json.RawMessage, error) {
	var page LogPage
	raw, err := c.doJSON(ctx, http.MethodGet, logsPath(run, node, inst, attempt, false), nil, &page)
	return page, raw, err
}

// FollowLogs streams the log of one attempt (of instance inst; attempt 0:
// the latest) and calls fn for each line until the attempt is over (nil),
// fn fails or ctx ends.
func (c *Client) FollowLogs(ctx context.Context, run, node string, inst, attempt int, fn func(LogLine) error) error {
	err := c.Stream(ctx, logsPath(run, node, inst, attempt, true), func(ev Event) error {
		switch ev.Type {
		case "end":
			return errLogEnd
		case "line":
			var l LogLine
			if err := json.Unmarshal([]byte(ev.Data), &l); err != nil {
				return fmt.Errorf("log line event %q: %w", ev.Data, err)
			}
			return fn(l)
		}
		return nil
	})
	if errors.Is(err, errLogEnd) {
		return nil
	}
	return err
}
