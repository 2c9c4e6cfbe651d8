package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	_ "time/tzdata" // time zones resolve even on hosts without zoneinfo

	"github.com/robfig/cron/v3"
)

// Timetable yields a schedule's fire times.
type Timetable interface {
	// Next returns the first fire time strictly after t, or the zero time
	// when there is none (a cron expression that never matches).
	Next(t time.Time) time.Time
}

// parser reads standard five-field cron expressions and descriptors
// (@yearly, @monthly, @weekly, @daily, @hourly, ...). @every is handled by
// Every, which anchors its period instead of counting from "now".
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// everyPrefix starts a constant-period expression such as "@every 2s".
const everyPrefix = "@every "

// Parse reads expr in time zone loc. An "@every D" expression fires at
// anchor + k·D (k ≥ 1), so its phase survives restarts; anchor is truncated
// to whole seconds. Errors are phrased for a user and never mention the
// parser's internals.
func Parse(expr string, loc *time.Location, anchor time.Time) (Timetable, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return nil, errors.New("cron expression is empty")
	case strings.HasPrefix(expr, everyPrefix) || expr == strings.TrimSpace(everyPrefix):
		return parseEvery(strings.TrimSpace(strings.TrimPrefix(expr, strings.TrimSpace(everyPrefix))), anchor)
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return nil, errors.New("cron expression must not carry a time zone; use the timezone field")
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("cron expression %q is invalid: want 5 fields (minute hour day-of-month month day-of-week), a descriptor such as @daily, or @every <duration>: %v", expr, err)
	}
	t := zoned{s: s, loc: loc}
	if t.Next(anchor).IsZero() {
		return nil, fmt.Errorf("cron expression %q never fires", expr)
	}
	return t, nil
}

// zoned evaluates a cron schedule in a time zone (robfig/cron would use
// the zone of the time it is given).
type zoned struct {
	s   cron.Schedule
	loc *time.Location
}

func (z zoned) Next(t time.Time) time.Time {
	n := z.s.Next(t.In(z.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// Every fires every Period after Anchor: Anchor + Period, Anchor + 2·Period, ...
type Every struct {
	Anchor time.Time
	Period time.Duration
}

// Next returns the first Anchor + k·Period (k ≥ 1) strictly after t.
func (e Every) Next(t time.Time) time.Time {
	if t.Before(e.Anchor) {
		return e.Anchor.Add(e.Period).UTC()
	}
	k := t.Sub(e.Anchor)/e.Period + 1
	return e.Anchor.Add(k * e.Period).UTC()
}

func parseEvery(d string, anchor time.Time) (Timetable, error) {
	p, err := time.ParseDuration(d)
	switch {
	case err != nil:
		return nil, fmt.Errorf("@every %q: want a duration such as 30s, 5m or 1h30m", d)
	case p < time.Second || p%time.Second != 0:
		return nil, fmt.Errorf("@every %s: the period must be a whole number of seconds, at least 1s", d)
	}
	return Every{Anchor: anchor.Truncate(time.Second).UTC(), Period: p}, nil
}

// Zone loads an IANA time zone name; empty means UTC. "Local" is refused:
// it would mean whatever zone the orchestrator's host happens to have.
func Zone(name string) (*time.Location, error) {
	switch name {
	case "":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`timezone "Local" is not allowed: name an IANA zone such as Europe/Paris, or UTC`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("timezone %q is not a known IANA zone name (e.g. UTC, Europe/Paris, America/New_York)", name)
	}
	return loc, nil
}
