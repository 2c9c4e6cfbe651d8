package handler

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

// LedgerLine is one event of one execution in a Config.Ledger file: its
// start, or its end with the outcome; when (Unix ms), which attempt of which
// node instance, and the worker and process that ran it. Tests count
// executions with it. A killed worker leaves a start without an end.
type LedgerLine struct {
	TimeMs int64
	// Phase is LedgerStart or LedgerEnd; Outcome, on an end, is "ok",
	// "error" or "cancelled" (its context ended: stopped, timed out or
	// shut down).
	Phase, Outcome string
	Run            string
	Node           string
	Instance       int
	Attempt        int
	Key            string
	Worker         string
	PID            int
}

// Ledger phases.
const (
	LedgerStart = "start"
	LedgerEnd   = "end"
)

// ledgerFields is how many tab-separated fields a line has.
const ledgerFields = 10

// String is the line as written: tab-separated fields in the struct's order.
func (l LedgerLine) String() string {
	return strings.Join([]string{strconv.FormatInt(l.TimeMs, 10), l.Phase, l.Outcome, l.Run, l.Node, strconv.Itoa(l.Instance),
		strconv.Itoa(l.Attempt), l.Key, l.Worker, strconv.Itoa(l.PID)}, "\t")
}

// ParseLedgerLine parses a line written by the ledger.
func ParseLedgerLine(s string) (LedgerLine, error) {
	f := strings.Split(s, "\t")
	if len(f) != ledgerFields {
		return LedgerLine{}, fmt.Errorf("ledger line %q: want %d tab-separated fields, got %d", s, ledgerFields, len(f))
	}
	var l LedgerLine
	var errs [4]error
	l.TimeMs, errs[0] = strconv.ParseInt(f[0], 10, 64)
	l.Instance, errs[1] = strconv.Atoi(f[5])
	l.Attempt, errs[2] = strconv.Atoi(f[6])
	l.PID, errs[3] = strconv.Atoi(f[9])
	for _, err := range errs {
		if err != nil {
			return LedgerLine{}, fmt.Errorf("ledger line %q: %w", s, err)
		}
	}
	l.Phase, l.Outcome, l.Run, l.Node, l.Key, l.Worker = f[1], f[2], f[3], f[4], f[7], f[8]
	return l, nil
}

// ledger appends one line per execution to a file shared by every worker
// process of a test (O_APPEND: each line is one write, never interleaved).
type ledger struct {
	path string
	once sync.Once
	f    *os.File
	err  error
}

func (l *ledger) record(task *worker.Task, phase, outcome string) error {
	l.once.Do(func() {
		l.f, l.err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	})
	if l.err != nil {
		return fmt.Errorf("ledger: %w", l.err)
	}
	line := LedgerLine{TimeMs: time.Now().UnixMilli(), Phase: phase, Outcome: outcome, Run: task.RunID, Node: task.NodeID, Instance: task.Instance,
		Attempt: task.Attempt, Key: task.IdempotencyKey, Worker: task.WorkerID, PID: os.Getpid()}
	if _, err := l.f.WriteString(line.String() + "\n"); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// ledgered records each execution's start in l before running h, and its
// end after; a start that cannot be written fails the attempt (retryable):
// an execution must never go uncounted.
func ledgered(l *ledger, h worker.HandlerFunc) worker.HandlerFunc {
	return func(ctx context.Context, task *worker.Task) (any, error) {
		if err := l.record(task, LedgerStart, ""); err != nil {
			return nil, err
		}
		out, err := h(ctx, task)
		outcome := "ok"
		switch {
		case ctx.Err() != nil:
			outcome = "cancelled"
		case err != nil:
			outcome = "error"
		}
		if lerr := l.record(task, LedgerEnd, outcome); lerr != nil && err == nil {
			return nil, lerr
		}
		return out, err
	}
}
