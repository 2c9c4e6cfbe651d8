// Package failpoint holds the orchestrator's fault-injection points for the
// e2e fault suite. They exist only in a binary built with the `failpoints`
// build tag; in every other build Enabled is the constant false, so the
// guarded call sites compile away and the binary carries no failpoint code
// and reads no failpoint setting.
//
// HoldWrite gives a test a deterministic moment to SIGSTOP an orchestrator
// holding a write in hand; ExitAfterWrite kills the orchestrator between
// storing a node's result and publishing what follows from it (seed 002's
// "crash after result"). They read their BRAID_FAILPOINT_* variables
// themselves (not through internal/config) so that normal builds have no
// such setting at all.
package failpoint

// EnvHoldWrite names the run whose next write HoldWrite holds, or "first"
// for the first one offered (the orchestrator offers writes of existing
// runs that dispatch tasks); a failpoints build only.
const EnvHoldWrite = "BRAID_FAILPOINT_HOLD_WRITE"

// EnvExitAfterWrite names a node: the first write that stores a finished
// result of it is followed by the process's SIGKILL, before the batch's
// follow-up messages are published and its offsets committed; a failpoints
// build only.
const EnvExitAfterWrite = "BRAID_FAILPOINT_EXIT_AFTER_WRITE"
