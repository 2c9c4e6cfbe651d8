package apiwire

import "encoding/json"

// Schedule is a schedule as the api shows it: the answer of GET, POST and
// PATCH /schedules/{id} and an item of GET /schedules.
type Schedule struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"` // IANA name
	// Input is the JSON object each run of the schedule starts with.
	Input   json.RawMessage `json:"input"`
	Enabled bool            `json:"enabled"`
	// Overlap is skip or allow: whether a fire starts a run while the
	// previous one is active.
	Overlap string `json:"overlap"`
	// NextFireAt is unset when the schedule is disabled or never fires again.
	NextFireAt Time `json:"next_fire_at,omitzero"`
	// LastFireAt and LastRunID are the latest fire that started a run.
	LastFireAt Time   `json:"last_fire_at,omitzero"`
	LastRunID  string `json:"last_run_id,omitempty"`
	// LastSkippedAt is the latest fire skipped by the overlap policy.
	LastSkippedAt Time `json:"last_skipped_at,omitzero"`
	// LastError says why the latest fire could not start a run.
	LastError string `json:"last_error,omitempty"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	// CreatedBy is the name of the api key that created the schedule.
	CreatedBy string `json:"created_by,omitempty"`
}

// SchedulePage is one page of GET /schedules, newest first.
type SchedulePage = Page[Schedule]

// NewSchedule is a body of POST /schedules; empty fields take the api's
// defaults (timezone UTC, overlap skip). The api reads bodies field by
// field so that PATCH can tell a field not sent from a zero one; this is
// the shape a client sends.
type NewSchedule struct {
	Workflow string          `json:"workflow"`
	Cron     string          `json:"cron"`
	Timezone string          `json:"timezone,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Enabled  bool            `json:"enabled"`
	Overlap  string          `json:"overlap,omitempty"`
}
