package apisvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/schedule"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// scheduleIDShape is what a schedule id may hold (the api makes UUIDv7s).
var scheduleIDShape = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// newScheduleDoc shows a stored schedule; an unset input shows as {}.
func newScheduleDoc(s statestore.StoredSchedule) apiwire.Schedule {
	d := s.Def
	input := d.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return apiwire.Schedule{
		ID: d.ID, Workflow: d.Workflow, Cron: d.Cron, Timezone: d.Timezone, Input: input, Enabled: d.Enabled,
		Overlap: d.Overlap, NextFireAt: apiwire.At(s.Next), LastFireAt: apiwire.At(s.LastFire), LastRunID: s.LastRun,
		LastSkippedAt: apiwire.At(s.LastSkip), LastError: s.LastError,
		CreatedAt: apiwire.UnixMilli(d.CreatedMs), UpdatedAt: apiwire.UnixMilli(d.UpdatedMs), CreatedBy: d.CreatedBy,
	}
}

// scheduleParam returns the :id path parameter of a schedule, checked.
func scheduleParam(c *gin.Context) (string, error) {
	id := c.Param("id")
	if !scheduleIDShape.MatchString(id) {
		return "", errBadRequest("schedule id %q is invalid: schedule ids match [A-Za-z0-9_.-]{1,64}", id)
	}
	return id, nil
}

// scheduleErr answers a schedule that is not there with a 404 and passes
// any other error on.
func scheduleErr(id string, err error) error {
	if errors.Is(err, statestore.ErrNotFound) {
		return errNotFound("schedule %q not found", id)
	}
	return err
}

// applyBody merges the fields a body sent into def (defaults for a new
// schedule are set by the caller) and reports whether its timing changed.
func applyBody(def *statestore.ScheduleDef, b scheduleBody) (timing bool) {
	set := func(dst *string, v *string) {
		if v != nil && *v != *dst {
			*dst, timing = *v, true
		}
	}
	set(&def.Cron, b.Cron)
	set(&def.Timezone, b.Timezone)
	if b.Workflow != nil {
		def.Workflow = *b.Workflow
	}
	if b.Overlap != nil {
		def.Overlap = *b.Overlap
	}
	if b.Input != nil {
		def.Input = b.Input
	}
	if b.Enabled != nil {
		timing = timing || (*b.Enabled && !def.Enabled)
		def.Enabled = *b.Enabled
	}
	return timing
}

// checkSchedule checks def as a create or update left it, after prior, the
// body's own problems (a field missing or of the wrong type): every problem
// is reported at once, a field's own first (a field with one is not checked
// again). With checkWorkflow the workflow must exist and the input fit its
// latest version. It returns def's timetable.
func (s *Server) checkSchedule(ctx context.Context, def *statestore.ScheduleDef, checkWorkflow bool, prior []FieldError) (schedule.Timetable, error) {
	errs := prior
	bad := make(map[string]bool, len(prior))
	for _, fe := range prior {
		bad[fe.Path] = true
	}
	add := func(path, msg string) {
		if !bad[path] {
			errs = append(errs, FieldError{Path: path, Message: msg})
		}
	}
	if bad["$.workflow"] || !workflowName.MatchString(def.Workflow) {
		add("$.workflow", fmt.Sprintf("workflow name %q is invalid: names match [a-z0-9][a-z0-9_.-]{0,63}", def.Workflow))
		checkWorkflow = false
	}
	if !schedule.ValidOverlap(def.Overlap) {
		add("$.overlap", fmt.Sprintf("overlap %q is not a policy: want skip or allow", def.Overlap))
	}
	loc, err := schedule.Zone(def.Timezone)
	if err != nil {
		add("$.timezone", err.Error())
		loc = time.UTC // still check the cron expression
	}
	tt, err := schedule.Parse(def.Cron, loc, time.UnixMilli(def.AnchorMs))
	if err != nil {
		add("$.cron", err.Error())
	}
	if checkWorkflow {
		problems, err := s.checkScheduleWorkflow(ctx, def)
		if err != nil {
			return nil, err
		}
		errs = append(errs, problems...)
	}
	if len(errs) > 0 {
		return nil, errInvalid(scheduleDetail(errs), errs)
	}
	return tt, nil
}

// checkScheduleWorkflow checks that def's workflow exists and that its
// input fits the workflow's latest version, as a run request's would.
func (s *Server) checkScheduleWorkflow(ctx context.Context, def *statestore.ScheduleDef) ([]FieldError, error) {
	info, err := s.keys.LiveWorkflow(ctx, s.rdb, def.Workflow)
	if errors.Is(err, statestore.ErrNotFound) {
		return []FieldError{{Path: "$.workflow", Message: fmt.Sprintf("workflow %q not found; register it first", def.Workflow)}}, nil
	}
	if err != nil {
		return nil, err
	}
	g, err := s.defs.get(ctx, def.Workflow, info.Latest)
	if err != nil {
		return nil, err
	}
	input, problems := checkInput(g.Def.Inputs, def.Input)
	def.Input = input
	return problems, nil
}

// scheduleDetail summarises schedule problems: how many, and the first.
func scheduleDetail(errs []FieldError) string {
	if len(errs) == 1 {
		return fmt.Sprintf("the schedule is invalid: %s: %s", errs[0].Path, errs[0].Message)
	}
	return fmt.Sprintf("the schedule is invalid: %d problems (see errors), first: %s: %s", len(errs), errs[0].Path, errs[0].Message)
}

// nextFire is a schedule's first fire time after now, or zero when it is disabled.
func nextFire(def statestore.ScheduleDef, tt schedule.Timetable, now time.Time) time.Time {
	if !def.Enabled {
		return time.Time{}
	}
	return tt.Next(now)
}
