package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// ListWorkers returns the live workers, or with all every registered one
// (those whose heartbeats stopped too): GET /workers.
func (c *Client) ListWorkers(ctx context.Context, all bool) (WorkerList, json.RawMessage, error) {
	path := "/workers"
	if all {
		path += "?all=true"
	}
	var list WorkerList
	raw, err := c.doJSON(ctx, http.MethodGet, path, nil, &list)
	return list, raw, err
}
