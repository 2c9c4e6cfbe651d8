package dag

import (
	"encoding/json"
	"strings"
	"time"
)

// Built-in node kinds: the orchestrator runs them itself, no worker.
const (
	// HandlerWait sleeps durably: config `duration` (a Go duration) or
	// `until` (an RFC 3339 time), either of which may be a template.
	HandlerWait = "wait"
	// HandlerApproval waits for an approve or reject through the API; config
	// `message` is shown to whoever decides; the node's timeout bounds the wait.
	HandlerApproval = "approval"
)

// checkBuiltin checks the config of a wait or approval node at path.
func (c *checker) checkBuiltin(n *Node, path string) {
	if (n.Handler == HandlerWait || n.Handler == HandlerApproval) && (n.Foreach != "" || len(n.Parallel) > 0) {
		c.probs.add(path+".handler", "%s nodes cannot fan out (foreach/parallel)", n.Handler)
	}
	switch n.Handler {
	case HandlerWait:
		c.checkWait(n, path)
	case HandlerApproval:
		var cfg struct {
			Message any `json:"message"`
		}
		if len(n.Config) > 0 && json.Unmarshal(n.Config, &cfg) != nil {
			c.probs.add(path+".config", "approval config must be an object (with an optional message)")
			return
		}
		if _, ok := cfg.Message.(string); cfg.Message != nil && !ok {
			c.probs.add(path+".config.message", "message must be a string")
		}
	}
}

// ApprovalMessage is approval node n's config message, shown to whoever
// decides: "" when it has none or n is not an approval node.
func (n *Node) ApprovalMessage() string {
	if n.Handler != HandlerApproval || len(n.Config) == 0 {
		return ""
	}
	var cfg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(n.Config, &cfg) != nil {
		return ""
	}
	return cfg.Message
}

// checkWait requires exactly one of duration and until, each valid unless
// it is a template (resolved, and checked again, at run time).
func (c *checker) checkWait(n *Node, path string) {
	var cfg map[string]any
	if err := json.Unmarshal(n.Config, &cfg); err != nil || cfg == nil {
		c.probs.add(path+".config", `wait needs a config object with "duration" (e.g. "30s") or "until" (an RFC 3339 time)`)
		return
	}
	d, hasD := cfg["duration"]
	u, hasU := cfg["until"]
	if hasD == hasU {
		c.probs.add(path+".config", `wait needs exactly one of "duration" and "until"`)
		return
	}
	if hasD {
		s, ok := d.(string)
		if !ok {
			c.probs.add(path+".config.duration", `duration must be a string such as "30s"`)
		} else if v, err := time.ParseDuration(s); !strings.Contains(s, "<<") && (err != nil || v < 0) {
			c.probs.add(path+".config.duration", "invalid duration %q: want a non-negative Go duration such as \"90s\" or \"1h\"", s)
		}
		return
	}
	s, ok := u.(string)
	if !ok {
		c.probs.add(path+".config.until", "until must be an RFC 3339 time string")
	} else if _, err := time.Parse(time.RFC3339Nano, s); !strings.Contains(s, "<<") && err != nil {
		c.probs.add(path+".config.until", "invalid time %q: want RFC 3339 such as \"2026-01-02T15:04:05Z\"", s)
	}
}
