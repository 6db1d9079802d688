package simtest

import (
	"fmt"
	"net"
	"sync"
)

// Port is a loopback TCP port a test holds for its whole length, so that a
// server it stops and starts again there (a service restarted at its
// address) never finds the port taken by another process in between:
// while no server listens on it, a connection to it is refused, as at a
// port nothing listens on, yet no other socket can bind it. On Linux the
// port is held by a socket bound to it throughout; elsewhere it is only
// picked, free at that moment, as before.
type Port struct {
	// Addr is the port's address, "127.0.0.1:PORT".
	Addr string

	mu        sync.Mutex
	listening bool
	closed    bool
	sock      heldSocket
}

// HoldPort holds a free loopback port. Close lets it go.
func HoldPort() (*Port, error) {
	sock, addr, err := holdSocket()
	if err != nil {
		return nil, err
	}
	return &Port{Addr: addr, sock: sock}, nil
}

// Listen makes the port listen, and returns its listener: closing that
// stops the listening (connections are refused again) and keeps the
// port. One listener at a time: stop the server on the port before
// starting the next.
func (p *Port) Listen() (net.Listener, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return nil, errPortClosed(p.Addr)
	case p.listening:
		return nil, errPortBusy(p.Addr)
	}
	ln, err := p.sock.listen(p.Addr)
	if err != nil {
		return nil, err
	}
	p.listening = true
	return &portListener{Listener: ln, port: p}, nil
}

// Close lets the port go; a listener still open on it stops.
func (p *Port) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.sock.close()
}

// portListener is a listener on a held port, whose Close stops the
// listening and keeps the port.
type portListener struct {
	net.Listener
	port *Port
	once sync.Once
	err  error
}

func (l *portListener) Close() error {
	l.once.Do(func() {
		l.err = l.Listener.Close()
		p := l.port
		p.mu.Lock()
		defer p.mu.Unlock()
		p.listening = false
		if !p.closed {
			if err := p.sock.unlisten(); err != nil && l.err == nil {
				l.err = err
			}
		}
	})
	return l.err
}

func errPortClosed(addr string) error { return fmt.Errorf("port %s was let go", addr) }

func errPortBusy(addr string) error {
	return fmt.Errorf("port %s is listening already: stop the server on it first", addr)
}
