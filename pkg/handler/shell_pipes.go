package handler

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// outputPipes are the stdout and stderr pipes of a command. The handler owns
// them (rather than letting exec.Cmd copy output) so that it can kill the
// process group as soon as the shell exits and before waiting for the pipes
// to drain: children holding them would otherwise delay the return.
type outputPipes struct {
	outR, outW, errR, errW *os.File
}

// newOutputPipes creates the pipes and attaches their write ends to cmd.
func newOutputPipes(cmd *exec.Cmd) (*outputPipes, error) {
	p := &outputPipes{}
	var err error
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = p.outW, p.errW
	return p, nil
}

// drain closes the parent's write ends (the child has its own) and copies
// both pipes to their writers; the channel closes when both reach EOF.
func (p *outputPipes) drain(stdout, stderr io.Writer) <-chan struct{} {
	_ = p.outW.Close()
	_ = p.errW.Close()
	done := make(chan struct{})
	copied := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(stdout, p.outR); copied <- struct{}{} }()
	go func() { _, _ = io.Copy(stderr, p.errR); copied <- struct{}{} }()
	go func() { <-copied; <-copied; close(done) }()
	return done
}

// await waits for drained, at most grace; then it stops the readers by
// expiring their deadlines and waits for them to return, and closes the pipes.
func (p *outputPipes) await(drained <-chan struct{}, grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		_ = p.outR.SetReadDeadline(time.Now())
		_ = p.errR.SetReadDeadline(time.Now())
		<-drained
	}
	p.close()
}

// close closes every pipe end that is still open.
func (p *outputPipes) close() {
	for _, f := range []*os.File{p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			_ = f.Close() // closing twice returns os.ErrClosed, harmless
		}
	}
}
