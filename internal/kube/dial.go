package kube

import (
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// NewOneDial returns a gate that holds back a run's requests to a server
// until its first request there has a connection, as the Transport
// wrapper of every client configuration of the run (rest.Config.Wrap). Requests sent side by side before there
// is one would each dial their own (net/http dials for every waiting
// request, and HTTP/2 then keeps one): a TLS handshake apiece, for the
// client and for the apiserver, where one connection carries them all.
// The first request's connection opens the way; so does its end, whatever
// it was, and so does a second's wait (oneDialWait): a server that does
// not answer its dial costs the others no more than that.
func NewOneDial() func(http.RoundTripper) http.RoundTripper {
	g := &dialGate{hosts: map[string]*hostGate{}, wait: oneDialWait}
	return g.Transport
}

// oneDialWait is how long a request waits for the first one's connection
// before it dials its own (as net/http alone does): a TLS handshake takes
// round trips, far fewer than a second.
const oneDialWait = time.Second

type dialGate struct {
	mu    sync.Mutex
	hosts map[string]*hostGate
	wait  time.Duration
}

// hostGate is a host's: its first request made it.
type hostGate struct {
	ready chan struct{}
	once  sync.Once
}

func (h *hostGate) open() { h.once.Do(func() { close(h.ready) }) }

// Transport wraps a client's round tripper (rest.Config.Wrap).
func (g *dialGate) Transport(rt http.RoundTripper) http.RoundTripper {
	return &gatedTransport{gate: g, next: rt}
}

type gatedTransport struct {
	gate *dialGate
	next http.RoundTripper
}

func (t *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := t.gate
	g.mu.Lock()
	h := g.hosts[req.URL.Host]
	first := h == nil
	if first {
		h = &hostGate{ready: make(chan struct{})}
		g.hosts[req.URL.Host] = h
	}
	g.mu.Unlock()
	if !first {
		timer := time.NewTimer(g.wait)
		defer timer.Stop()
		select {
		case <-h.ready:
		case <-timer.C:
		case <-req.Context().Done():
			// A RoundTripper closes the body, even when it sends nothing.
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, req.Context().Err()
		}
		return t.next.RoundTrip(req)
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { h.open() }}
	resp, err := t.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	h.open()
	return resp, err
}
