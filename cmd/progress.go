package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// progressEvery is how often a long run's progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// progressLine is the one progress line of a long run over many objects
// (audit, migrate): redrawn in place on standard error, at most every
// progressEvery, when standard error is a terminal and the output is a
// text view; nothing otherwise. The run keeps its counts where line reads
// them (line may be called while the run runs); an empty line is not
// drawn (yet).
type progressLine struct {
	w     io.Writer
	line  func() string
	stop  chan struct{}
	group errgroup.Group
	once  sync.Once
}

// startProgress starts redrawing line on w, if w is a terminal and data is
// false (JSON, YAML and templates have no progress line).
func startProgress(w io.Writer, data bool, line func() string) *progressLine {
	p := &progressLine{w: w, line: line}
	if data || !render.IsTerminal(w) {
		return p
	}
	p.stop = make(chan struct{})
	p.group.Go(func() error {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return nil
			case <-tick.C:
				if l := p.line(); l != "" {
					fmt.Fprintf(p.w, "\r%s", l)
				}
			}
		}
	})
	return p
}

// done stops the redrawing and leaves the last counts on their line.
func (p *progressLine) done() {
	if p.stop == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		_ = p.group.Wait()
		fmt.Fprintf(p.w, "\r%s\n", p.line())
	})
}
