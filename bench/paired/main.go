// Command paired times commands in paired runs: run i of every command
// follows run i of the one before it, so a busy moment of the machine
// falls on all of them alike. For each command it reports the median
// wall time, the median CPU time (user + system, from the kernel's
// accounting of the process, to the microsecond) and the median peak RSS,
// each with its ratio to a baseline command.
//
// With -server-pid, it also measures the CPU time the server process (the
// test bed's apiserver and etcd) spends during each run, from the
// scheduler's per-thread accounting, and reports the client's and the
// server's CPU together: a server-side dry run moves work to the server
// that a local prediction does in the client.
//
//	paired -runs 15 -baseline floor [-server-pid PID] SPEC
//
// SPEC has one command a line, its fields separated by tabs:
//
//	NAME  PREPARE  OK_CODES  ARG0  ARG1 ...
//
// PREPARE is a shell snippet run untimed before each run ("" for none,
// e.g. removing a cache directory for a cold run); OK_CODES the exit
// codes that count as success, comma-separated. A run that exits with
// another code stops everything with its output.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type command struct {
	name, prepare string
	ok            []int
	argv          []string
	wall, cpu     []time.Duration
	server        []time.Duration
	rss           []int64 // KiB
}

func main() {
	runs := flag.Int("runs", 15, "paired runs of every command")
	baseline := flag.String("baseline", "", "the command every ratio is to (default: the first)")
	warmup := flag.Int("warmup", 1, "untimed runs of every command first")
	serverPID := flag.Int("server-pid", 0, "also measure this process's CPU time during each run (the apiserver's)")
	flag.Parse()
	if flag.NArg() != 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: paired [-runs N] [-baseline NAME] SPEC")
		os.Exit(2)
	}
	cmds, err := readSpec(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	for i := 0; i < *warmup+*runs; i++ {
		for _, c := range cmds {
			if err := c.run(i >= *warmup, *serverPID); err != nil {
				fmt.Fprintln(os.Stderr, "error:", err)
				os.Exit(1)
			}
		}
	}
	report(cmds, *baseline, *runs, *serverPID != 0)
}

// processCPU is the CPU time of every thread of a process, from
// /proc/PID/task/*/schedstat (nanoseconds on a CPU, first field).
func processCPU(pid int) (time.Duration, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("reading the CPU time of process %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	var sum time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a schedstat line", f, b)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

func readSpec(file string) ([]*command, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []*command
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.TrimSpace(s.Text()) == "" {
			continue
		}
		fields := strings.Split(strings.TrimRight(s.Text(), "\t"), "\t")
		if len(fields) < 4 {
			return nil, fmt.Errorf("%s: %q: want NAME, PREPARE, OK_CODES and a command, tab-separated", file, s.Text())
		}
		c := &command{name: fields[0], prepare: fields[1], argv: fields[3:]}
		for _, v := range strings.Split(fields[2], ",") {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: exit code %q is not a number", file, c.name, v)
			}
			c.ok = append(c.ok, n)
		}
		out = append(out, c)
	}
	return out, s.Err()
}

func (c *command) run(record bool, serverPID int) error {
	if c.prepare != "" {
		if out, err := exec.Command("sh", "-c", c.prepare).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: prepare %q: %w: %s", c.name, c.prepare, err, out)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	var serverBefore time.Duration
	if serverPID != 0 {
		var err error
		if serverBefore, err = processCPU(serverPID); err != nil {
			return err
		}
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var server time.Duration
	if serverPID != 0 {
		after, err := processCPU(serverPID)
		if err != nil {
			return err
		}
		server = after - serverBefore
	}
	if cmd.ProcessState == nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if code := cmd.ProcessState.ExitCode(); !slices.Contains(c.ok, code) {
		return fmt.Errorf("%s: %s exited %d:\n%s", c.name, strings.Join(c.argv, " "), code, out.String())
	}
	if record {
		c.wall = append(c.wall, wall)
		c.cpu = append(c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		c.rss = append(c.rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
		c.server = append(c.server, server)
	}
	return nil
}

func median[T int64 | time.Duration](v []T) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

func report(cmds []*command, baseline string, runs int, server bool) {
	base := cmds[0]
	for _, c := range cmds {
		if c.name == baseline {
			base = c
		}
	}
	bw, bc := median(base.wall), median(base.cpu)
	w := len("COMMAND")
	for _, c := range cmds {
		w = max(w, len(c.name))
	}
	fmt.Printf("medians of %d paired runs; ratios to %q\n", runs, base.name)
	if !server {
		fmt.Printf("%-*s  %8s %6s  %8s %6s  %8s\n", w, "COMMAND", "WALL_MS", "RATIO", "CPU_MS", "RATIO", "RSS_MIB")
		for _, c := range cmds {
			cw, cc := median(c.wall), median(c.cpu)
			fmt.Printf("%-*s  %8.1f %5.2fx  %8.1f %5.2fx  %8.1f\n", w, c.name,
				cw/1e6, cw/bw, cc/1e6, cc/bc, median(c.rss)/1024)
		}
		return
	}
	// CPU of client and server together, run by run.
	total := func(c *command) []time.Duration {
		out := make([]time.Duration, len(c.cpu))
		for i := range c.cpu {
			out[i] = c.cpu[i] + c.server[i]
		}
		return out
	}
	bt := median(total(base))
	fmt.Printf("%-*s  %8s %6s  %8s %6s  %9s  %8s %6s  %8s\n", w, "COMMAND", "WALL_MS", "RATIO", "CPU_MS", "RATIO", "SERVER_MS", "BOTH_MS", "RATIO", "RSS_MIB")
	for _, c := range cmds {
		cw, cc, ct := median(c.wall), median(c.cpu), median(total(c))
		fmt.Printf("%-*s  %8.1f %5.2fx  %8.1f %5.2fx  %9.1f  %8.1f %5.2fx  %8.1f\n", w, c.name,
			cw/1e6, cw/bw, cc/1e6, cc/bc, median(c.server)/1e6, ct/1e6, ct/bt, median(c.rss)/1024)
	}
}
