package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// ListSchedules returns one page of schedules, newest first: GET /schedules.
func (c *Client) ListSchedules(ctx context.Context, limit int, cursor string) (SchedulePage, json.RawMessage, error) {
	var page SchedulePage
	raw, err := c.doJSON(ctx, http.MethodGet, "/schedules"+pageQuery(url.Values{}, limit, cursor), nil, &page)
	return page, raw, err
}

// CreateSchedule creates a schedule: POST /schedules.
func (c *Client) CreateSchedule(ctx context.Context, s NewSchedule) (Schedule, json.RawMessage, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return Schedule{}, nil, fmt.Errorf("create schedule of %s: %w", s.Workflow, err)
	}
	var out Schedule
	raw, err := c.doJSON(ctx, http.MethodPost, "/schedules", body, &out)
	return out, raw, err
}

// DeleteSchedule deletes a schedule: DELETE /schedules/{id}.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.doJSON(ctx, http.MethodDelete, "/schedules/"+url.PathEscape(id), nil, nil)
	return err
}

// SetScheduleEnabled enables or disables a schedule: PATCH /schedules/{id}
// with only "enabled", so nothing else of it changes.
func (c *Client) SetScheduleEnabled(ctx context.Context, id string, enabled bool) (Schedule, json.RawMessage, error) {
	body, err := json.Marshal(struct {
		Enabled bool `json:"enabled"`
	}{enabled})
	if err != nil {
		return Schedule{}, nil, fmt.Errorf("update schedule %s: %w", id, err)
	}
	var out Schedule
	raw, err := c.doJSON(ctx, http.MethodPatch, "/schedules/"+url.PathEscape(id), body, &out)
	return out, raw, err
}
