package dag

import "encoding/json"

// MaxNodes is the largest number of nodes a definition may have.
const MaxNodes = 10000

// MaxDefinitionBytes is the largest definition Parse accepts, in bytes (1 MiB).
const MaxDefinitionBytes = 1 << 20

// MaxFanOut is the most instances one fan-out node may have. A literal
// parallel above it is invalid; a foreach or parallel template that
// resolves above it fails its node when the run reaches it.
const MaxFanOut = 1_000_000

// Definition is one version of a workflow: what a user registers and a run pins.
type Definition struct {
	Name        string               `json:"name"`                  // [a-z0-9][a-z0-9_.-]{0,63}
	Description string               `json:"description,omitempty"` // free text
	Inputs      map[string]InputSpec `json:"inputs,omitempty"`      // run inputs, read as << input.NAME >>
	Concurrency int                  `json:"concurrency,omitempty"` // max active runs of this workflow; 0 = unlimited
	Timeout     Duration             `json:"timeout,omitempty"`     // whole-run deadline; 0 = none
	Nodes       []Node               `json:"nodes"`
}

// InputSpec declares one run input.
type InputSpec struct {
	Type        string          `json:"type,omitempty"` // "", any, string, number, integer, boolean, object, array
	Default     json.RawMessage `json:"default,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Description string          `json:"description,omitempty"`
}

// Node is one step of a workflow.
type Node struct {
	ID               string          `json:"id"`                          // unique, [A-Za-z0-9_-]{1,64}
	Handler          string          `json:"handler"`                     // worker handler name, or wait/approval
	Config           json.RawMessage `json:"config,omitempty"`            // any JSON; strings may hold templates
	DependsOn        []string        `json:"depends_on,omitempty"`        // parent node ids
	TriggerRule      TriggerRule     `json:"trigger_rule,omitempty"`      // "" means TriggerAllSuccess
	When             string          `json:"when,omitempty"`              // expr-lang condition; false → skipped
	Retry            *RetryPolicy    `json:"retry,omitempty"`             // nil = one attempt
	Timeout          Duration        `json:"timeout,omitempty"`           // per attempt; 0 = none
	HeartbeatTimeout Duration        `json:"heartbeat_timeout,omitempty"` // 0 = the orchestrator default
	Parallel         json.RawMessage `json:"parallel,omitempty"`          // positive int or template string
	Foreach          string          `json:"foreach,omitempty"`           // template yielding a JSON array
	Concurrency      int             `json:"concurrency,omitempty"`       // max in-flight instances; 0 = unlimited
}

// FanOut reports whether the node runs as several instances (foreach or parallel).
func (n *Node) FanOut() bool { return n.Foreach != "" || len(n.Parallel) > 0 }

// TriggerRule says which parent outcomes let a node run.
type TriggerRule string

// Trigger rules (SPEC §3). The empty rule means TriggerAllSuccess.
const (
	TriggerAllSuccess TriggerRule = "all_success"
	TriggerAllDone    TriggerRule = "all_done"
	TriggerOneSuccess TriggerRule = "one_success"
	TriggerOneFailed  TriggerRule = "one_failed"
	TriggerNoneFailed TriggerRule = "none_failed"
	TriggerAllFailed  TriggerRule = "all_failed"
)

// TriggerRules lists every valid rule, TriggerAllSuccess first.
var TriggerRules = []TriggerRule{
	TriggerAllSuccess, TriggerAllDone, TriggerOneSuccess, TriggerOneFailed, TriggerNoneFailed, TriggerAllFailed,
}

// OrDefault returns r, or TriggerAllSuccess when r is empty.
func (r TriggerRule) OrDefault() TriggerRule {
	if r == "" {
		return TriggerAllSuccess
	}
	return r
}

// Valid reports whether r is empty or one of TriggerRules.
func (r TriggerRule) Valid() bool {
	if r == "" {
		return true
	}
	for _, v := range TriggerRules {
		if r == v {
			return true
		}
	}
	return false
}

// Template roots that are not node ids. A node may not use one of these as its id.
const (
	RootInput = "input" // run inputs
	RootRun   = "run"   // run metadata: id, workflow, version
	RootItem  = "item"  // the current foreach element
	RootIndex = "index" // the instance index in a fan-out node
	RootCount = "count" // the instance count in a fan-out node
	// RootSecret names a secret (<< secret.NAME >>) that the worker running
	// the task resolves from its own store: the orchestrator, Redis and
	// Kafka never see the value.
	RootSecret = "secret"
)

// reservedRoot reports whether id is a template root and so cannot name a node.
func reservedRoot(id string) bool {
	switch id {
	case RootInput, RootRun, RootItem, RootIndex, RootCount, RootSecret:
		return true
	}
	return false
}

// validName reports whether s matches [a-z0-9][a-z0-9_.-]{0,63}.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// validID reports whether s matches [A-Za-z0-9_-]{1,64}.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && !(c >= 'A' && c <= 'Z') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') }

// DefaultFanOutConcurrency caps the in-flight instances of a fan-out node
// that sets no concurrency, so that a 100,000-item foreach never turns into
// 100,000 dispatches at once.
const DefaultFanOutConcurrency = 1000

// InstanceCap returns the most instances of n that may be in flight at once.
func (n *Node) InstanceCap() int {
	if n.Concurrency > 0 {
		return n.Concurrency
	}
	return DefaultFanOutConcurrency
}
