package kube

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Requests sent side by side before there is a connection share the
// first one's: one TLS handshake, where net/http alone dials for each.
func TestOneDialSharesTheFirstConnection(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2", http.StatusBadRequest)
		}
	}))
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	gate := &dialGate{hosts: map[string]*hostGate{}, wait: time.Minute}
	client := &http.Client{Transport: gate.Transport(srv.Client().Transport)}
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			codes[i] = resp.StatusCode
			_ = resp.Body.Close()
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// When the first request gets no connection, the others try their own
// and fail as it did, at once; a request whose context ends while it
// waits returns.
func TestOneDialLetsTheOthersGoWhenTheFirstFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	gate := &dialGate{hosts: map[string]*hostGate{}, wait: time.Minute}
	client := &http.Client{Transport: gate.Transport(&http.Transport{}), Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := client.Get("http://" + addr); err == nil {
				_ = resp.Body.Close()
				t.Error("a request to a closed port succeeded")
			}
		}()
	}
	wg.Wait()

	// A gate whose first request never gets a connection: a waiting
	// request's context ends its wait.
	h := &hostGate{ready: make(chan struct{})}
	gate = &dialGate{hosts: map[string]*hostGate{"example.invalid": h}, wait: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid/", nil)
	resp, err := gate.Transport(&http.Transport{}).RoundTrip(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// A server that never answers the first request's dial holds the others
// back no longer than the gate's wait: then they dial their own.
func TestOneDialWaitsNoLongerThanItsWait(t *testing.T) {
	h := &hostGate{ready: make(chan struct{})} // the first request never connects
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	gate := &dialGate{hosts: map[string]*hostGate{host: h}, wait: 50 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: gate.Transport(&http.Transport{})}).Get(srv.URL)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the request failed after the wait: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request still waits for a connection that never comes")
	}
}
