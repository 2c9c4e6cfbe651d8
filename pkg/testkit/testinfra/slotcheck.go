package testinfra

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// scriptCommands are the commands that run a Lua script or a function.
// All take: script (body, SHA1 or function name), numkeys, keys, args.
var scriptCommands = map[string]bool{
	"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true,
}

// SlotCheck is a go-redis hook (add it with AddHook, on a single-node or a
// cluster client) that checks that every script call keeps to one Redis
// Cluster hash slot. For each EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL and
// FCALL_RO, sent alone or in a pipeline, it reads numkeys and the keys and
// fails the test (t.Errorf) when they hash to more than one slot (Slot), or
// when numkeys does not fit the arguments. A cluster refuses such a call
// (CROSSSLOT) but a single server runs it, so the check finds it in tests
// that need no cluster. It counts the calls it checked, by script, so a
// test can tell which scripts it covered. Safe for concurrent use; it
// forwards every command unchanged.
type SlotCheck struct {
	// Names optionally names scripts (SHA1 → name) in failure messages.
	// Set it before the first command.
	Names map[string]string

	t    testing.TB
	mu   sync.Mutex
	seen map[string]int
}

// NewSlotCheck returns a SlotCheck that reports to t.
func NewSlotCheck(t testing.TB) *SlotCheck {
	return &SlotCheck{t: t, seen: map[string]int{}}
}

// Checked is the number of script calls checked so far.
func (s *SlotCheck) Checked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.seen {
		n += c
	}
	return n
}

// Seen maps each script checked so far to its number of calls: by the
// script's SHA1 in lower-case hex (what EVALSHA carries and
// redis.Script.Hash returns; an EVAL's body is hashed) or, for FCALL, by
// "function:<name>". It returns a copy.
func (s *SlotCheck) Seen() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.seen)
}

// DialHook leaves dialling alone.
func (s *SlotCheck) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

// ProcessHook checks a single command, then sends it.
func (s *SlotCheck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.check(cmd)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook checks every command of a pipeline (or
// transaction), then sends them.
func (s *SlotCheck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			s.check(cmd)
		}
		return next(ctx, cmds)
	}
}

// check counts cmd and reports it if it is a script call whose keys span
// more than one slot.
func (s *SlotCheck) check(cmd redis.Cmder) {
	name, args := cmd.Name(), cmd.Args()
	if !scriptCommands[name] || len(args) < 3 {
		return
	}
	id := scriptID(name, argString(args[1]))
	s.mu.Lock()
	s.seen[id]++
	s.mu.Unlock()
	keys, err := scriptKeys(args)
	if err == nil {
		err = oneSlot(keys)
	}
	if err != nil {
		s.t.Errorf("slot check: %s of script %s: %v", strings.ToUpper(name), s.describe(id), err)
	}
}

// describe is id with its name from Names, if any.
func (s *SlotCheck) describe(id string) string {
	if n, ok := s.Names[id]; ok {
		return fmt.Sprintf("%q (%s)", n, id)
	}
	return id
}

// scriptID names the script a command runs (see Seen).
func scriptID(cmd, script string) string {
	switch cmd {
	case "eval", "eval_ro":
		sum := sha1.Sum([]byte(script))
		return hex.EncodeToString(sum[:])
	case "fcall", "fcall_ro":
		return "function:" + script
	}
	return strings.ToLower(script)
}

// scriptKeys reads the keys of a script command's arguments: name,
// script, numkeys, keys..., args...
func scriptKeys(args []any) ([]string, error) {
	n, err := strconv.Atoi(argString(args[2]))
	if err != nil || n < 0 || 3+n > len(args) {
		return nil, fmt.Errorf("numkeys %v does not fit %d arguments", args[2], len(args))
	}
	keys := make([]string, n)
	for i := range n {
		keys[i] = argString(args[3+i])
	}
	return keys, nil
}

// oneSlot says whether keys all hash to the same slot.
func oneSlot(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	first := Slot(keys[0])
	for _, k := range keys[1:] {
		if s := Slot(k); s != first {
			return fmt.Errorf("keys span slots: %q is in slot %d, %q in slot %d (of %d keys)",
				keys[0], first, k, s, len(keys))
		}
	}
	return nil
}

// argString is a command argument as the server receives it.
func argString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}
