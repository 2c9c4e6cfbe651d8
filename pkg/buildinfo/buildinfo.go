// Package buildinfo names the build a binary came from. Release builds
// stamp it with -ldflags (the Dockerfiles in deploy/ and `make images` do):
//
//	-X github.com/braidhq/braid/pkg/buildinfo.Version=v1.2.3
//	-X github.com/braidhq/braid/pkg/buildinfo.Commit=<sha>
//
// Unstamped builds report "dev" and the VCS revision Go recorded, if any.
package buildinfo

import "runtime/debug"

// Version and Commit are set with -ldflags -X at build time.
var (
	Version = "dev"
	Commit  = ""
)

// Info is what a binary reports of its build.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Go      string `json:"go"`
}

// Get returns the stamped version and commit, the commit falling back to
// the VCS revision recorded by the Go toolchain.
func Get() Info {
	i := Info{Version: Version, Commit: Commit}
	if bi, ok := debug.ReadBuildInfo(); ok {
		i.Go = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && i.Commit == "" {
				i.Commit = s.Value
			}
		}
	}
	return i
}

// String is "VERSION (COMMIT)" or "VERSION".
func (i Info) String() string {
	if i.Commit == "" {
		return i.Version
	}
	c := i.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	return i.Version + " (" + c + ")"
}
