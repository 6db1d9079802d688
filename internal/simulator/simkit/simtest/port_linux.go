package simtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// heldSocket is a TCP socket bound to the held port from HoldPort to
// Close. Bound and not listening, it refuses connections (the kernel
// answers a SYN with a reset), and, without SO_REUSEADDR, no other socket
// may bind the port. Listening, it takes SO_REUSEADDR, which its accepted
// connections inherit: their TIME_WAIT remains would otherwise stop it
// from listening again; and while it listens no other socket may bind the
// port either. It stops listening, keeping its port, by a connect to
// AF_UNSPEC (Linux's disconnect, which leaves an explicitly bound port
// bound), and drops SO_REUSEADDR again.
type heldSocket struct {
	fd   int
	file *os.File // owns fd; net.FileListener duplicates it
}

func holdSocket() (heldSocket, string, error) {
	var last error
	// The port is bound explicitly (a port bound as 0 is let go by the
	// disconnect): it is picked free by a listener of port 0, which
	// another process may take before the bind, so that is tried again
	// with another; nothing depends on the number yet.
	for range 20 {
		probe, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return heldSocket{}, "", fmt.Errorf("picking a free port: %w", err)
		}
		port := probe.Addr().(*net.TCPAddr).Port
		probe.Close()
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return heldSocket{}, "", fmt.Errorf("making a socket: %w", err)
		}
		err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		if err != nil {
			syscall.Close(fd)
			last = err
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		return heldSocket{fd: fd, file: os.NewFile(uintptr(fd), addr)}, addr, nil
	}
	return heldSocket{}, "", fmt.Errorf("holding a free port: %w", last)
}

func (s heldSocket) listen(addr string) (net.Listener, error) {
	if err := syscall.SetsockoptInt(s.fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	if err := syscall.Listen(s.fd, syscall.SOMAXCONN); err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	ln, err := net.FileListener(s.file)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listening on %s: %w", addr, err), s.unlisten())
	}
	return ln, nil
}

func (s heldSocket) unlisten() error {
	unspec := syscall.RawSockaddr{Family: syscall.AF_UNSPEC}
	if _, _, errno := syscall.Syscall(syscall.SYS_CONNECT, uintptr(s.fd), uintptr(unsafe.Pointer(&unspec)), unsafe.Sizeof(unspec)); errno != 0 {
		return fmt.Errorf("stopping the listening on a held port: %w", errno)
	}
	if err := syscall.SetsockoptInt(s.fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 0); err != nil {
		return fmt.Errorf("stopping the listening on a held port: %w", err)
	}
	return nil
}

func (s heldSocket) close() error { return s.file.Close() }
