package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// isURL tells whether an input of -f is a URL, as kubectl's builder tells.
func isURL(path string) bool {
	return strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://")
}

// fetch reads url, up to MaxInputBytes (checked while the body streams),
// within timeout and until ctx is done: the builder's own fetch has
// neither bound.
func fetch(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fetchError(ctx, url, timeout, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("unable to read URL %q, server reported %s, status code=%d", url, resp.Status, resp.StatusCode)
	}
	if resp.ContentLength > MaxInputBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d read from one input: split it into several files", url, resp.ContentLength, MaxInputBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxInputBytes+1))
	if err != nil {
		return nil, fetchError(ctx, url, timeout, err)
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("%s holds more than %d bytes, over what is read from one input: split it", url, MaxInputBytes)
	}
	return data, nil
}

func fetchError(ctx context.Context, url string, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not answer in full within %s: try again, raise --request-timeout, or download it and give the file", url, timeout)
	}
	return fmt.Errorf("reading %s: %w", url, err)
}
