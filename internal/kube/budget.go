package kube

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// MaxTotalInputBytes bounds what one run reads from all its inputs
// together (every file of -f and its directories, live files, schemas,
// standard input, URLs): four inputs at their bound.
const MaxTotalInputBytes = 256 << 20

// DefaultFetchTimeout bounds the fetch of a URL given as an input when
// kubectl's --request-timeout is not set.
const DefaultFetchTimeout = 30 * time.Second

// inputs is what one run may still read, and how long a URL may take.
type inputs struct {
	mu      sync.Mutex
	read    int64
	timeout time.Duration
}

type inputsKey struct{}

// WithInputs returns a copy of ctx whose reads of inputs share one
// MaxTotalInputBytes, and fetch a URL within requestTimeout (kubectl's
// --request-timeout: "1m", "30s", or seconds; empty or "0":
// DefaultFetchTimeout). Without it, each read of a set of inputs has its
// own total.
func WithInputs(ctx context.Context, requestTimeout string) context.Context {
	return context.WithValue(ctx, inputsKey{}, &inputs{timeout: fetchTimeout(requestTimeout)})
}

func fetchTimeout(s string) time.Duration {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d
	}
	return DefaultFetchTimeout
}

// inputsOf is the run's inputs, or new ones for this read alone.
func inputsOf(ctx context.Context) *inputs {
	if in, ok := ctx.Value(inputsKey{}).(*inputs); ok {
		return in
	}
	return &inputs{timeout: DefaultFetchTimeout}
}

// take counts n bytes of what, refusing them past MaxTotalInputBytes.
func (in *inputs) take(what string, n int64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.read+n > MaxTotalInputBytes {
		return fmt.Errorf("%s brings what this run reads over %d bytes, the most read from all inputs together: give fewer or smaller files at once", what, MaxTotalInputBytes)
	}
	in.read += n
	return nil
}
