// Package failpoint holds the worker's fault-injection point for the e2e
// fault suite. It exists only in a binary built with the `failpoints` build
// tag; in every other build Enabled is the constant false, so the guarded
// call site compiles away and the binary reads no failpoint setting.
//
// ExitAfterResult kills the worker right after the broker acknowledged a
// node's final result, before anything else the worker does for it (seed
// 002's "crash after result"). It reads BRAID_FAILPOINT_EXIT_AFTER_RESULT
// itself so that normal builds have no such setting at all.
package failpoint

// EnvExitAfterResult names a node: once the broker acknowledged the final
// result of an attempt of it, the process SIGKILLs itself; a failpoints
// build only.
const EnvExitAfterResult = "BRAID_FAILPOINT_EXIT_AFTER_RESULT"
