package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/cli-runtime/pkg/resource"
)

// MaxInputBytes bounds what is read from one input (a file of -f, a
// live file, standard input): ten times the largest object a cluster
// stores per MiB, many thousands of objects; /dev/zero, or a log given by
// mistake, must not be read until memory runs out.
const MaxInputBytes = 64 << 20

// withFiles adds the files to b, as FilenameParam does, but reads
// standard input ("-f -"), URLs, and what is not a regular file or a
// directory (a pipe: "-f <(helm template ...)", a device) itself, up to
// MaxInputBytes and until ctx is done (a URL within the run's timeout, see
// WithInputs): the builder's own read of them does not stop on Ctrl-C,
// and has no bound. Regular files over the bound, or over what the run
// may still read (MaxTotalInputBytes), are refused before anything is
// read; so is a kustomization with remote resources. Objects read here
// come after the files'.
func withFiles(ctx context.Context, in io.Reader, b *resource.Builder, enforce bool, files *resource.FilenameOptions) (*resource.Builder, error) {
	if in == nil {
		in = os.Stdin
	}
	run := inputsOf(ctx)
	if files.Kustomize != "" {
		if err := checkKustomization(files.Kustomize); err != nil {
			return nil, err
		}
	}
	stdin := false
	var special []string
	rest := *files
	rest.Filenames = nil
	for _, f := range files.Filenames {
		if f == "-" {
			if stdin {
				return nil, errors.New("standard input (-f -) can be given once")
			}
			stdin = true
			continue
		}
		isSpecial, err := checkInput(run, f, files.Recursive)
		if err != nil {
			return nil, err
		}
		if isSpecial {
			special = append(special, f)
			continue
		}
		rest.Filenames = append(rest.Filenames, f)
	}
	b = b.FilenameParam(enforce, &rest)
	for _, f := range special {
		data, err := readSpecial(ctx, run, f)
		if err != nil {
			return nil, err
		}
		b = b.Stream(bytes.NewReader(data), f)
	}
	if !stdin {
		return b, nil
	}
	data, err := readInput(ctx, "standard input", func() (io.ReadCloser, error) { return io.NopCloser(in), nil })
	if err == nil {
		err = run.take("standard input", int64(len(data)))
	}
	if err != nil {
		return nil, err
	}
	return b.Stream(bytes.NewReader(data), "STDIN"), nil
}

// readSpecial reads a URL or what is neither a regular file nor a
// directory, counted in what the run reads.
func readSpecial(ctx context.Context, run *inputs, f string) ([]byte, error) {
	var data []byte
	var err error
	if isURL(f) {
		data, err = fetch(ctx, f, run.timeout)
	} else {
		data, err = readInput(ctx, f, func() (io.ReadCloser, error) { return os.Open(f) })
	}
	if err != nil {
		return nil, err
	}
	return data, run.take(f, int64(len(data)))
}

// checkInput refuses a regular file over MaxInputBytes, or one in a
// directory that the builder would read (through symlinks, as the builder
// reads them), or one past what the run may still read, and what is not a
// regular file in a directory (a FIFO, a device, a socket); special is
// true for a URL and for what is neither a regular file nor a directory
// (read by readSpecial). Paths that can't be read are the builder's to
// report.
func checkInput(run *inputs, path string, recursive bool) (special bool, err error) {
	if isURL(path) {
		return true, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, nil //nolint:nilerr // the builder reports what it can't read, in its words
	}
	switch {
	case fi.Mode().IsRegular():
		return false, checkSize(run, path, fi.Size())
	case !fi.IsDir():
		return true, nil
	}
	return false, filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // the builder reports what it can't read
		}
		if d.IsDir() {
			if p != path && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".json", ".yaml", ".yml":
			return checkInDirectory(run, p)
		}
		return nil
	})
}

// checkInDirectory checks a file the builder reads in a directory: a
// symlink is followed, as the builder follows it.
func checkInDirectory(run *inputs, p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil, fi.IsDir():
		return nil //nolint:nilerr // the builder reports it
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s): give a pipe or a device with -f itself, not in a directory", p, fileKind(fi.Mode()))
	}
	return checkSize(run, p, fi.Size())
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

func checkSize(run *inputs, path string, size int64) error {
	if err := tooLarge(path, size); err != nil {
		return err
	}
	return run.take(path, size)
}

func tooLarge(path string, size int64) error {
	if size > MaxInputBytes {
		return fmt.Errorf("%s is %d bytes, over the %d read from one input: split it into several files", path, size, MaxInputBytes)
	}
	return nil
}

// readInput reads what open opens, up to MaxInputBytes, until ctx is done.
func readInput(ctx context.Context, what string, open func() (io.ReadCloser, error)) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	r, err := untilDone(ctx, func() read {
		r, err := open()
		if err != nil {
			return read{nil, err}
		}
		defer func() { _ = r.Close() }()
		data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
		return read{data, err}
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if r.err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, r.err)
	}
	if len(r.data) > MaxInputBytes {
		return nil, fmt.Errorf("%s holds more than %d bytes, over what is read from one input: split it", what, MaxInputBytes)
	}
	return r.data, nil
}
