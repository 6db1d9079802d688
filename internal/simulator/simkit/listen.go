package simkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Handler is a simulator: any of them can be served by Listen.
type Handler interface {
	http.Handler
	// Jobs is what GET /_sim/jobs serves.
	Jobs() JobsReport
	// Close makes the simulator's state durable.
	Close() error
}

// Instance is a simulator listening on a TCP address, as genform runs it
// in-process when no base_url is configured and as `genform sim` runs it.
type Instance struct {
	// URL is the base URL clients use, e.g. http://127.0.0.1:8787. When
	// the server listens on every interface, URL names the loopback one.
	URL string
	// Handler is the simulator behind the listener, for Jobs reports.
	Handler Handler

	http      *http.Server
	done      chan error
	closeOnce sync.Once
	closeErr  error
}

// shutdownGrace bounds how long Close waits for requests in flight.
const shutdownGrace = 5 * time.Second

// Listen serves s on addr ("127.0.0.1:0" picks a free port) and returns
// once the listener accepts connections. When it cannot listen, it closes
// s.
func Listen(addr string, s Handler) (*Instance, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator: listening on %s: %w", addr, err)
	}
	return Serve(ln, s), nil
}

// Serve serves s on ln, which it closes on Close: a listener the caller
// made, such as one on a port a test holds across a restart of the
// simulator (so that no other process can take the port in between).
func Serve(ln net.Listener, s Handler) *Instance {
	inst := &Instance{
		URL:     "http://" + clientAddr(ln.Addr()),
		Handler: s,
		http: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		done: make(chan error, 1),
	}
	go func() { inst.done <- inst.http.Serve(ln) }()
	return inst
}

// Close stops accepting connections, waits a few seconds for requests in
// flight, and saves the server's state. Calling it again returns the
// first call's result.
func (i *Instance) Close() error {
	i.closeOnce.Do(func() { i.closeErr = i.close() })
	return i.closeErr
}

func (i *Instance) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := i.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = i.http.Close()
	}
	if serr := <-i.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if cerr := i.Handler.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("simulator: shutting down: %w", err)
	}
	return nil
}

// clientAddr is the address a local client dials to reach a listener: the
// listener's own, or loopback when it listens on every interface.
func clientAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
