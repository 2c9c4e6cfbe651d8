// Package devstack runs Braid's whole stack in one process for `braid dev`
// (SPEC §10): an embedded kfake broker persisting under <data-dir>/kafka, a
// redis-server child process with AOF under <data-dir>/redis (or an
// in-memory miniredis with a loud warning when redis-server is missing),
// then the api, the orchestrator and N workers. Shutdown runs in reverse
// order and every step is bounded in time. State lives in the data
// directory, so starting again resumes unfinished runs.
package devstack
