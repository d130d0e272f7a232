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
	"strings"

	"k8s.io/cli-runtime/pkg/resource"
)

// MaxInputBytes bounds what is read from one input (a file of -f, a
// live file, standard input): ten times the largest object a cluster
// stores per MiB, many thousands of objects; /dev/zero, or a log given by
// mistake, must not be read until memory runs out.
const MaxInputBytes = 64 << 20

// withFiles adds the files to b, as FilenameParam does, but reads
// standard input ("-f -") and what is not a regular file or a directory
// (a pipe: "-f <(helm template ...)", a device) itself, up to
// MaxInputBytes and until ctx is done: the builder's own read of them
// does not stop on Ctrl-C, and has no bound. Regular files over the bound
// are refused before anything is read. Objects read here come after the
// files'.
func withFiles(ctx context.Context, in io.Reader, b *resource.Builder, enforce bool, files *resource.FilenameOptions) (*resource.Builder, error) {
	if in == nil {
		in = os.Stdin
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
		isSpecial, err := checkInput(f, files.Recursive)
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
		data, err := readInput(ctx, f, func() (io.ReadCloser, error) { return os.Open(f) })
		if err != nil {
			return nil, err
		}
		b = b.Stream(bytes.NewReader(data), f)
	}
	if !stdin {
		return b, nil
	}
	data, err := readInput(ctx, "standard input", func() (io.ReadCloser, error) { return io.NopCloser(in), nil })
	if err != nil {
		return nil, err
	}
	return b.Stream(bytes.NewReader(data), "STDIN"), nil
}

// checkInput refuses a regular file over MaxInputBytes, or one in a
// directory that the builder would read; special is true for what is
// neither a regular file nor a directory (read by readInput). URLs and
// paths that can't be read are the builder's to report.
func checkInput(path string, recursive bool) (special bool, err error) {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return false, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, nil //nolint:nilerr // the builder reports what it can't read, in its words
	}
	switch {
	case fi.Mode().IsRegular():
		return false, tooLarge(path, fi.Size())
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
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				return tooLarge(p, fi.Size())
			}
		}
		return nil
	})
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
