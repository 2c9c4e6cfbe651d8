package browser

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// leftovers are the pids of the running processes started with
// --user-data-dir=profile: Chromium and each of its helpers carry it, and
// each test's profile is a fresh temp dir, so they are this browser's own.
// Zombies have an empty command line and do not count. Where there is no
// /proc (not Linux) it finds none.
func leftovers(profile string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && usesProfile(pid, profile) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// usesProfile is whether process pid has --user-data-dir=profile among its
// arguments.
func usesProfile(pid int, profile string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && hasArg(cmdline, "--user-data-dir="+profile)
}

// hasArg is whether cmdline holds arg whole. Arguments are NUL-separated,
// but Chromium's helpers rewrite their process title into one string with
// the arguments joined by spaces, so a space ends an argument too.
func hasArg(cmdline []byte, arg string) bool {
	sep := func(i int) bool { return i < 0 || i >= len(cmdline) || cmdline[i] == 0 || cmdline[i] == ' ' }
	for from := 0; ; {
		i := bytes.Index(cmdline[from:], []byte(arg))
		if i < 0 {
			return false
		}
		i += from
		if sep(i-1) && sep(i+len(arg)) {
			return true
		}
		from = i + 1
	}
}

// killLeftovers sends SIGKILL to the leftovers of profile. Each is checked
// again after os.FindProcess, which holds a pidfd on Linux: a pid reused in
// between by another program is never signalled.
func killLeftovers(profile string) {
	for _, pid := range leftovers(profile) {
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if usesProfile(pid, profile) {
			_ = p.Kill() // it may have exited by itself meanwhile
		}
		_ = p.Release()
	}
}
