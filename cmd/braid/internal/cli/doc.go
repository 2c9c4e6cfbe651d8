// Package cli is the braid command line: the `dev` stack and the commands
// that talk to a Braid API over HTTP (apply, run, runs, get, logs, cancel,
// retry) or work offline (validate). Main runs it and maps errors to exit
// codes: 0 success, 1 failure (including a run that did not succeed), 2
// usage errors.
package cli
