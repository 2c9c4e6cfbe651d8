package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// ListWorkflows returns one page of registered workflows, newest first:
// GET /workflows.
func (c *Client) ListWorkflows(ctx context.Context, limit int, cursor string) (WorkflowPage, json.RawMessage, error) {
	var page WorkflowPage
	raw, err := c.doJSON(ctx, http.MethodGet, "/workflows"+pageQuery(url.Values{}, limit, cursor), nil, &page)
	return page, raw, err
}

// GetWorkflow returns version (0: the latest) of a workflow with its
// definition: GET /workflows/{name}.
func (c *Client) GetWorkflow(ctx context.Context, name string, version int) (WorkflowDoc, json.RawMessage, error) {
	path := "/workflows/" + url.PathEscape(name)
	if version > 0 {
		path += "?version=" + strconv.Itoa(version)
	}
	var doc WorkflowDoc
	raw, err := c.doJSON(ctx, http.MethodGet, path, nil, &doc)
	return doc, raw, err
}

// DeleteWorkflow deletes a workflow: DELETE /workflows/{name}. Runs
// already started keep their version.
func (c *Client) DeleteWorkflow(ctx context.Context, name string) error {
	_, err := c.doJSON(ctx, http.MethodDelete, "/workflows/"+url.PathEscape(name), nil, nil)
	return err
}
