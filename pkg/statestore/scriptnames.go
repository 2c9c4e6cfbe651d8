package statestore

import "github.com/redis/go-redis/v9"

// scripts names every Lua script of the store, for metrics.
var scripts = map[string]*redis.Script{
	"apply": applyScript, "start": startScript, "acquire": acquireScript, "refresh": refreshScript,
	"drop_holder": dropHolderScript, "claim": claimScript, "claims": claimsScript, "heartbeat": heartbeatScript, "release": releaseScript,
	"admit_slot": admitSlotScript, "release_slot": releaseSlotScript, "heads": headsScript, "reserve": reserveScript,
	"register": registerScript, "page": pageScript, "create_pending": createPendingScript,
	"delete_pending": deletePendingScript, "put_schedule": putScheduleScript,
	"delete_schedule": deleteScheduleScript, "advance_schedule": advanceScheduleScript,
	"ended": endedScript, "prune_mark": pruneMarkScript,
}

// ScriptNames maps the SHA1 (hex) of every Lua script of the store to a
// short name ("apply", "claim", ...): what EVALSHA carries, so that a Redis
// hook can time scripts by name (a bounded metric label) rather than by
// hash or key. A fresh map on every call.
func ScriptNames() map[string]string {
	out := make(map[string]string, len(scripts))
	for name, s := range scripts {
		out[s.Hash()] = name
	}
	return out
}
