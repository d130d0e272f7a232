package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profileOptions are kubectl's hidden --profile and --profile-output: a
// CPU or memory profile of one run, for bench/ and for whoever chases a
// slow command (go tool pprof kubectl-ssa profile.pprof).
type profileOptions struct {
	name   string
	output string
	file   *os.File
}

func (p *profileOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.name, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|allocs).")
	fs.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to.")
	_ = fs.MarkHidden("profile")
	_ = fs.MarkHidden("profile-output")
}

func (p *profileOptions) start() error {
	switch p.name {
	case "none":
		return nil
	case "cpu", "heap", "allocs":
	default:
		return fmt.Errorf("--profile must be none, cpu, heap or allocs, not %q", p.name)
	}
	f, err := os.Create(p.output)
	if err != nil {
		return fmt.Errorf("--profile-output: %w", err)
	}
	p.file = f
	if p.name == "cpu" {
		return pprof.StartCPUProfile(f)
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
	if p.name == "cpu" {
		pprof.StopCPUProfile()
	} else {
		runtime.GC()
		err = pprof.Lookup(p.name).WriteTo(p.file, 0)
	}
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	return err
}
