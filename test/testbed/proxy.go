package testbed

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback address of its own to
// the test bed's apiserver. Down and Up make that address behave as an
// apiserver restarting on it does for its clients: open connections
// (watches) break, new ones are refused, then the same address serves
// again. The server itself, and every client that connects to it
// directly (the rest of a suite), are not disturbed.
type Proxy struct {
	Addr   string // host:port clients connect to
	target string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]bool
}

// NewProxy starts a proxy to target (host:port).
func NewProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	p.serve(l)
	return p, nil
}

func (p *Proxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *Proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	_, _ = c.Close(), s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// Down stops listening and breaks the open connections: connecting to
// Addr is refused until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		_ = p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// Up listens on Addr again.
func (p *Proxy) Up() error {
	var err error
	for i := 0; i < 50; i++ { // the port may linger for a moment
		var l net.Listener
		if l, err = net.Listen("tcp", p.Addr); err == nil {
			p.serve(l)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("listening on %s again: %w", p.Addr, err)
}

// Close stops the proxy.
func (p *Proxy) Close() { p.Down() }
