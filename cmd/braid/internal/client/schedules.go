package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Schedule is a schedule as the api shows it.
type Schedule struct {
	ID         string          `json:"id"`
	Workflow   string          `json:"workflow"`
	Cron       string          `json:"cron"`
	Timezone   string          `json:"timezone"`
	Input      json.RawMessage `json:"input"`
	Enabled    bool            `json:"enabled"`
	Overlap    string          `json:"overlap"`
	NextFireAt Time            `json:"next_fire_at"`
	LastFireAt Time            `json:"last_fire_at"`
	LastRunID  string          `json:"last_run_id,omitempty"`
	LastError  string          `json:"last_error,omitempty"`
}

// SchedulePage is one page of GET /schedules.
type SchedulePage struct {
	Schedules  []Schedule `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// NewSchedule is the body of POST /schedules; empty fields take the api's
// defaults (timezone UTC, overlap skip).
type NewSchedule struct {
	Workflow string          `json:"workflow"`
	Cron     string          `json:"cron"`
	Timezone string          `json:"timezone,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Enabled  bool            `json:"enabled"`
	Overlap  string          `json:"overlap,omitempty"`
}

// ListSchedules returns one page of schedules, newest first: GET /schedules.
func (c *Client) ListSchedules(ctx context.Context, limit int, cursor string) (SchedulePage, json.RawMessage, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	path := "/schedules"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var page SchedulePage
	raw, err := c.doJSON(ctx, http.MethodGet, path, nil, &page)
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
