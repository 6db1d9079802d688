package simulator

import (
	"net"

	"github.com/genform/genform/internal/simulator/simkit"
)

// Instance is a Server listening on a TCP address, as genform runs it
// in-process when no base_url is configured and as `genform sim` runs it.
// simkit.Listen serves the live providers' simulators the same way.
type Instance struct {
	// URL is the base URL clients use, e.g. http://127.0.0.1:8787. When
	// the server listens on every interface, URL names the loopback one.
	URL string
	// Server is the handler behind the listener, for Jobs reports.
	Server *Server

	inst *simkit.Instance
}

// Listen starts a Server configured by opts on addr ("127.0.0.1:0" picks a
// free port) and returns once the listener accepts connections.
func Listen(addr string, opts Options) (*Instance, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	inst, err := simkit.Listen(addr, s)
	if err != nil {
		return nil, err
	}
	return &Instance{URL: inst.URL, Server: s, inst: inst}, nil
}

// Serve starts a Server configured by opts on ln, which Close closes (see
// simkit.Serve). When the server cannot be made, ln is closed.
func Serve(ln net.Listener, opts Options) (*Instance, error) {
	s, err := New(opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	inst := simkit.Serve(ln, s)
	return &Instance{URL: inst.URL, Server: s, inst: inst}, nil
}

// Close stops accepting connections, waits a few seconds for requests in
// flight, and saves the server's state. Calling it again returns the
// first call's result.
func (i *Instance) Close() error { return i.inst.Close() }
