// Package procstack runs Braid as separate OS processes, the shape it is
// deployed in, for the end-to-end suite and the benchmarks: it builds the
// service binaries of the workspace (Build), starts the broker and Redis
// with `braid dev --only infra` (StartInfra), and supervises each process
// (Start): output captured in a log file, stop by PID (SIGTERM, then
// SIGKILL after a bound), kill -9, other signals (SIGSTOP, SIGCONT),
// restart with the same binary, arguments and environment, exit status,
// and resident memory and CPU time read from /proc. Ready tells when a
// started stack takes work (/readyz answers, every worker is listed).
//
// Every process gets this process's environment without its BRAID_*
// variables plus exactly the variables it is given, so a caller's settings
// cannot leak into a stack. On Linux each child gets SIGKILL when the thread
// that started it ends (Pdeathsig; Go ends a thread only with its process or
// with a goroutine locked to it), so a crashed test or bench leaves nothing
// behind.
//
// Every wait is bounded: Stop, Wait and Poll take their bound as an
// argument; only Kill waits for the exit that SIGKILL guarantees.
package procstack
