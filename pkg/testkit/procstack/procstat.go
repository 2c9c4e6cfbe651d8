package procstack

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Mem is a process's resident memory from /proc/PID/status, in MiB.
type Mem struct {
	// HWM is VmHWM, the peak resident set since start or the last ResetPeak.
	HWM float64
	// RSS is VmRSS, the resident set now.
	RSS float64
}

// ReadMem reads /proc/PID/status of p.
func (p *Proc) ReadMem() (Mem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return Mem{}, fmt.Errorf("read memory of %s pid=%d: %w", p.spec.Name, p.PID(), err)
	}
	return parseStatus(b)
}

// parseStatus extracts VmHWM and VmRSS (kB) from a /proc/PID/status file.
func parseStatus(b []byte) (Mem, error) {
	var m Mem
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return Mem{}, fmt.Errorf("parse %s %q: %w", name, rest, err)
		}
		if name == "VmHWM" {
			m.HWM = kb / 1024
		} else {
			m.RSS = kb / 1024
		}
		found++
	}
	if found != 2 {
		return Mem{}, fmt.Errorf("VmHWM or VmRSS missing from /proc status")
	}
	return m, nil
}

// ResetPeak resets the process's VmHWM to its current RSS (Linux: writing
// 5 to /proc/PID/clear_refs), so the next ReadMem shows the peak since now.
func (p *Proc) ResetPeak() error {
	path := fmt.Sprintf("/proc/%d/clear_refs", p.PID())
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak memory of %s pid=%d: %w", p.spec.Name, p.PID(), err)
	}
	return nil
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ),
// 100 Hz on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// CPU returns the user plus system CPU time the process has used so far
// (resolution 10 ms).
func (p *Proc) CPU() (time.Duration, error) { return PIDCPU(p.PID()) }

// PIDCPU returns the user plus system CPU time process pid has used so far.
func PIDCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu of pid=%d: %w", pid, err)
	}
	return parseStatCPU(b)
}

// Children lists the child process ids of p (Linux: the children files
// of each of its threads).
func (p *Proc) Children() ([]int, error) {
	dirs, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.PID()))
	if err != nil {
		return nil, fmt.Errorf("children of %s pid=%d: %w", p.spec.Name, p.PID(), err)
	}
	var out []int
	for _, d := range dirs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p.PID(), d.Name()))
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out, nil
}

// parseStatCPU returns utime+stime of a /proc/PID/stat line. The command
// name (field 2) may hold spaces, so fields are counted after its ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat %.40q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// After ')': state is field 3, so utime (14) and stime (15) are f[11], f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat %.40q", b)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed cpu times %q %q in /proc stat", f[11], f[12])
	}
	return time.Duration(u+s) * clockTick, nil
}
