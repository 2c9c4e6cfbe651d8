package client

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
)

// Stream reads the server-sent events at path (with query) and calls fn for
// each, until fn fails, ctx ends or the server closes the stream. It fails
// at once when the answer is not text/event-stream.
func (c *Client) Stream(ctx context.Context, path string, fn func(Event) error) error {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := send(c.stream, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fmt.Errorf("GET %s: answered %q, not an event stream", path, mt)
	}
	if err := readEvents(resp.Body, fn); err != nil && ctx.Err() == nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return ctx.Err()
}

// RunEvents streams a run's state changes: GET /runs/{id}/events.
func (c *Client) RunEvents(ctx context.Context, id string, fn func(Event) error) error {
	return c.Stream(ctx, "/runs/"+url.PathEscape(id)+"/events", fn)
}

// logsPath is the log endpoint of one node, with attempt (0: latest) and follow.
func logsPath(run, node string, inst, attempt int, follow bool) string {
	q := url.Values{}
	if inst > 0 {
		q.Set("instance", strconv.Itoa(inst))
	}
	if attempt > 0 {
		q.Set("attempt", strconv.Itoa(attempt))
	}
	if follow {
		q.Set("follow", "true")
	}
	p := "/runs/" + url.PathEscape(run) + "/tasks/" + url.PathEscape(node) + "/logs"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}
