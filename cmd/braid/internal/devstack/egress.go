package devstack

import (
	"fmt"

	"github.com/braidhq/braid/pkg/handler"
)

// egress is what the dev workers' http and llm nodes may reach: public
// addresses, loopback unless cfg.RefuseLoopback, and cfg.HTTPAllow; never
// the stack's own api, broker and Redis, even on loopback.
func egress(cfg Config, inf *infra) handler.Egress {
	return handler.Egress{
		Allow:         cfg.HTTPAllow,
		AllowLoopback: !cfg.RefuseLoopback,
		Own: []handler.Listener{
			{Name: "api", Addr: cfg.APIAddr},
			{Name: "kafka", Addr: inf.kafkaAddr},
			{Name: "redis", Addr: inf.redis.Addr()},
		},
	}
}

// egressLine describes egress for the banner: braid dev is more open than
// braid-worker, and says so.
func egressLine(cfg Config) string {
	s := "http/llm nodes may call public addresses and loopback (not this stack's own ports); --allow-loopback=false refuses loopback"
	if cfg.RefuseLoopback {
		s = "http/llm nodes may call public addresses only, as braid-worker (--allow-loopback=false)"
	}
	if cfg.HTTPAllow.Len() > 0 {
		s += fmt.Sprintf("; BRAID_HTTP_ALLOW also opens %s", cfg.HTTPAllow)
	}
	return s
}
