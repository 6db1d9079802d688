//go:build !linux

package simtest

import (
	"fmt"
	"net"
)

// heldSocket only picks a free port: holding one takes Linux's
// disconnect of a listening socket. Another process may take the port
// between a stop and a start.
type heldSocket struct{}

func holdSocket() (heldSocket, string, error) {
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return heldSocket{}, "", fmt.Errorf("picking a free port: %w", err)
	}
	addr := probe.Addr().String()
	return heldSocket{}, addr, probe.Close()
}

func (heldSocket) listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func (heldSocket) unlisten() error { return nil }

func (heldSocket) close() error { return nil }
