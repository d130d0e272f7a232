package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/pflag"
)

// profileOptions are kubectl's hidden --profile and --profile-output: a
// CPU or memory profile of one run, or its execution trace, for bench/
// and for whoever chases a slow command (go tool pprof kubectl-ssa
// profile.pprof; go tool trace profile.pprof).
type profileOptions struct {
	name   string
	output string
	file   *os.File
}

func (p *profileOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.name, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|allocs|trace).")
	fs.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to.")
	_ = fs.MarkHidden("profile")
	_ = fs.MarkHidden("profile-output")
}

func (p *profileOptions) start() error {
	switch p.name {
	case "none":
		return nil
	case "cpu", "heap", "allocs", "trace":
	default:
		return fmt.Errorf("--profile must be none, cpu, heap, allocs or trace, not %q", p.name)
	}
	f, err := os.Create(p.output)
	if err != nil {
		return fmt.Errorf("--profile-output: %w", err)
	}
	p.file = f
	switch p.name {
	case "cpu":
		return pprof.StartCPUProfile(f)
	case "trace":
		// go tool trace: when the run waits on the server, and what runs
		// side by side.
		return trace.Start(f)
	}
	return nil
}

// stop writes the profile; the command's own error comes first.
func (p *profileOptions) stop() error {
	if p.file == nil {
		return nil
	}
	defer func() { p.file = nil }()
	var err error
	switch p.name {
	case "cpu":
		pprof.StopCPUProfile()
	case "trace":
		trace.Stop()
	default:
		runtime.GC()
		err = pprof.Lookup(p.name).WriteTo(p.file, 0)
	}
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	return err
}
