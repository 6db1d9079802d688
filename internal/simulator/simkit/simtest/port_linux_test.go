package simtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
)

// TestPortIsHeldAcrossRestarts: a held port refuses connections while no
// server listens on it and never lets another socket bind it, so a server
// stopped and started again there finds it free, however many
// connections it served before (whose TIME_WAIT remains would keep a
// plain socket from listening again).
func TestPortIsHeldAcrossRestarts(t *testing.T) {
	p, err := HoldPort()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	refused := func(when string) {
		t.Helper()
		c, err := net.Dial("tcp", p.Addr)
		if err == nil {
			c.Close()
			t.Fatalf("%s: a connection was taken", when)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("%s: %v, want connection refused", when, err)
		}
		if other, err := net.Listen("tcp", p.Addr); err == nil {
			other.Close()
			t.Fatalf("%s: another listener took the port", when)
		}
	}
	refused("held")
	for round := range 3 {
		ln, err := p.Listen()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := p.Listen(); err == nil {
			t.Fatalf("round %d: a second listener at once", round)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, round)
		})}
		go srv.Serve(ln)
		for range 5 {
			resp, err := http.Get("http://" + p.Addr + "/")
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != fmt.Sprint(round) {
				t.Fatalf("round %d answered by %q", round, b)
			}
		}
		if other, err := net.Listen("tcp", p.Addr); err == nil {
			other.Close()
			t.Fatalf("round %d: another listener took the port while served", round)
		}
		srv.Close() // closes ln: the server stopped, its connections closed
		refused(fmt.Sprintf("after round %d", round))
	}
}
