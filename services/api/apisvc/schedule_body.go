package apisvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"
)

// scheduleBody is a decoded POST or PATCH /schedules body: a nil field was
// not sent.
type scheduleBody struct {
	Workflow *string
	Cron     *string
	Timezone *string
	Input    json.RawMessage // nil: not sent
	Enabled  *bool
	Overlap  *string
	// Sent holds the names of the fields the body held, valid or not.
	Sent map[string]bool
}

// scheduleFields are the fields a schedule body may hold.
var scheduleFields = []string{"workflow", "cron", "timezone", "input", "enabled", "overlap"}

// decodeScheduleBody reads a schedule body. A body that is not a JSON
// object is a 400; unknown fields and fields of the wrong type are listed
// together (422), each with its path.
func decodeScheduleBody(raw []byte) (scheduleBody, []FieldError, error) {
	var b scheduleBody
	var fields map[string]json.RawMessage
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return b, nil, errBadRequest("the body is empty: send a JSON object with %s", strings.Join(scheduleFields, ", "))
	}
	if t[0] != '{' {
		return b, nil, errBadRequest("invalid JSON body: a schedule must be a JSON object")
	}
	if err := decodeStrict(t, &fields); err != nil {
		return b, nil, err
	}
	var errs []FieldError
	b.Sent = make(map[string]bool, len(fields))
	for _, name := range sortedNames(fields) {
		v := fields[name]
		b.Sent[name] = true
		var err error
		switch name {
		case "workflow":
			b.Workflow, err = stringField(v)
		case "cron":
			b.Cron, err = stringField(v)
		case "timezone":
			b.Timezone, err = stringField(v)
		case "overlap":
			b.Overlap, err = stringField(v)
		case "enabled":
			b.Enabled, err = boolField(v)
		case "input":
			b.Input = v
		default:
			err = fmt.Errorf("unknown field %q; a schedule has %s", name, strings.Join(scheduleFields, ", "))
		}
		if err != nil {
			errs = append(errs, FieldError{Path: fieldPath(name), Message: err.Error()})
		}
	}
	return b, errs, nil
}

// scheduleBodyOf reads the body of a create or update; required names the
// fields it must send. A body that cannot be read is an error; its fields'
// problems (missing, unknown, of the wrong type) come back as a list, for
// checkSchedule to report with the rest, all at once.
func scheduleBodyOf(c *gin.Context, required ...string) (scheduleBody, []FieldError, error) {
	raw, err := readJSONBody(c)
	if err != nil {
		return scheduleBody{}, nil, err
	}
	body, errs, err := decodeScheduleBody(raw)
	if err != nil {
		return body, nil, err
	}
	for _, name := range required {
		if !body.Sent[name] {
			errs = append(errs, FieldError{Path: "$." + name, Message: name + " is required"})
		}
	}
	return body, errs, nil
}

// stringField decodes a JSON string; null and other types are refused.
func stringField(v json.RawMessage) (*string, error) {
	var s string
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) || json.Unmarshal(v, &s) != nil {
		return nil, fmt.Errorf("must be a string")
	}
	return &s, nil
}

// boolField decodes a JSON boolean; null and other types are refused.
func boolField(v json.RawMessage) (*bool, error) {
	var b bool
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) || json.Unmarshal(v, &b) != nil {
		return nil, fmt.Errorf("must be true or false")
	}
	return &b, nil
}

// fieldPath is the JSON path of a top-level body field.
func fieldPath(name string) string {
	if nodeIDShape.MatchString(name) {
		return "$." + name
	}
	q, _ := json.Marshal(name)
	return "$[" + string(q) + "]"
}
