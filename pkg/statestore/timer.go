package statestore

import (
	"fmt"
	"strconv"
	"strings"
)

// Timer is a durable timer of one run, stored as a member of the Timers
// sorted set scored by its due time.
type Timer struct {
	Run      string
	Kind     int // eventsv1.TimerKind value
	Node     string
	Instance int
	Attempt  int
}

const timerSep = "|"

// Member encodes t as a sorted-set member. Run ids and node ids never hold "|".
func (t Timer) Member() string {
	return strings.Join([]string{t.Run, strconv.Itoa(t.Kind), t.Node, strconv.Itoa(t.Instance), strconv.Itoa(t.Attempt)}, timerSep)
}

// ParseTimer decodes a Timers member.
func ParseTimer(m string) (Timer, error) {
	p := strings.Split(m, timerSep)
	if len(p) != 5 {
		return Timer{}, fmt.Errorf("timer member %q: want 5 fields, got %d", m, len(p))
	}
	kind, err1 := strconv.Atoi(p[1])
	inst, err2 := strconv.Atoi(p[3])
	att, err3 := strconv.Atoi(p[4])
	if err1 != nil || err2 != nil || err3 != nil || p[0] == "" {
		return Timer{}, fmt.Errorf("timer member %q: malformed", m)
	}
	return Timer{Run: p[0], Kind: kind, Node: p[2], Instance: inst, Attempt: att}, nil
}
