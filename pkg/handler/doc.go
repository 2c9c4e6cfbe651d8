// Package handler holds Braid's built-in task handlers: noop, shell, http,
// llm, transform and simulate (SPEC section 7).
//
// Builtins returns them keyed by handler name, ready to register with a
// worker. Every handler decodes its node config leniently about unknown keys
// (seed workflows keep extra keys such as "action") but strictly about the
// types of the keys it knows: a bad config fails the attempt with a
// worker.Permanent error naming the field.
//
// Failure classification follows worker.Handler: a plain error is retried per
// the node's retry policy, a worker.Permanent error is not. Handlers that have
// something useful to show for a failed attempt (shell's exit code and
// captured output, http's response) return that output together with the
// error; the worker runtime records the output of a failed attempt as well,
// so it appears in the API and UI next to the error.
//
// Captured stdout, stderr and response bodies are capped at
// Config.MaxOutputBytes; the excess is replaced by a marker of the form
// "…[truncated N bytes]". Reading a body stops 64 MiB past the cap (the count
// of dropped bytes is then a minimum), and every http and llm call ends
// after 10 minutes at most, reading included.
//
// The http and llm handlers dial through an egress guard (Config.Egress):
// each connection's resolved address is checked at dial time, so redirects,
// DNS rebinding and odd IP spellings cannot reach loopback, private, link-local
// (cloud metadata) or the stack's own listeners unless the operator allowed
// them (BRAID_HTTP_ALLOW). A refused call fails permanently with an
// EgressError. No proxy from the environment is used: it would hide the
// target from the guard.
package handler
