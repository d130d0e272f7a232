// Command latency is a TCP proxy that delays every chunk it forwards by a
// fixed one-way latency, in both directions, without limiting throughput:
// bench/floor.sh runs through it (LATENCY_MS) to measure against an
// apiserver a round trip away, as a user's cluster is, rather than on
// the same machine. TLS passes through untouched.
//
//	latency -listen 127.0.0.1:0 -to 127.0.0.1:6443 -one-way 5ms
//
// It prints "listening ADDRESS" once it accepts connections.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
)

type chunk struct {
	due  time.Time
	data []byte
}

// forward copies src to dst, each chunk written one-way after it was
// read; it closes dst's writing side when src ends.
func forward(dst, src net.Conn, oneWay time.Duration) {
	q := make(chan chunk, 4096)
	var writer errgroup.Group
	writer.Go(func() error {
		for c := range q {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.data); err != nil {
				for range q { // drain: the reader stops on its own
				}
				return nil
			}
		}
		return nil
	})
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{due: time.Now().Add(oneWay), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			break
		}
	}
	close(q)
	_ = writer.Wait()
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	} else {
		_ = dst.Close()
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	to := flag.String("to", "", "address to forward to (the apiserver's host:port)")
	oneWay := flag.Duration("one-way", 5*time.Millisecond, "latency added in each direction")
	flag.Parse()
	if *to == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: latency -to HOST:PORT [-listen ADDR] [-one-way 5ms]")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Println("listening", l.Addr())
	// Connections are proxied side by side until the process ends: the
	// group is never waited for.
	var conns errgroup.Group
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		conns.Go(func() error {
			proxy(c, *to, *oneWay)
			return nil
		})
	}
}

// proxy forwards c to a new connection to to, both ways, until both ends
// are done.
func proxy(c net.Conn, to string, oneWay time.Duration) {
	s, err := net.Dial("tcp", to)
	if err != nil {
		_, _ = io.WriteString(os.Stderr, "error: "+err.Error()+"\n")
		_ = c.Close()
		return
	}
	var up errgroup.Group
	up.Go(func() error {
		forward(s, c, oneWay)
		return nil
	})
	forward(c, s, oneWay)
	_ = up.Wait()
	_ = c.Close()
	_ = s.Close()
}
