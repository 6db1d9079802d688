package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrLinkLocal is matched by the error of a request refused because it
// would reach a link-local address (169.254.0.0/16, fe80::/10): there
// sits the cloud metadata service (169.254.169.254), which hands out the
// machine's credentials to whoever asks. A service's answer names the
// URLs genform fetches, so a hostile or broken one could point a media
// URL or a redirect there. It is never retried.
var ErrLinkLocal = errors.New("genform never fetches link-local addresses (they reach the machine's cloud metadata service)")

// linkLocalAddr reports whether host, a URL's host name without its port,
// is a link-local IP address (an IPv4-mapped IPv6 one and an IPv6 zone
// included).
func linkLocalAddr(host string) bool {
	a, err := netip.ParseAddr(strings.TrimSuffix(host, "."))
	return err == nil && a.Unmap().IsLinkLocalUnicast()
}

// ownHost reports whether host is the base URL's own host: the user chose
// it, link-local or not.
func (c *Client) ownHost(host string) bool {
	base := c.base.Hostname()
	if strings.EqualFold(host, base) {
		return true
	}
	a, errA := netip.ParseAddr(host)
	b, errB := netip.ParseAddr(base)
	return errA == nil && errB == nil && a.Unmap().WithZone("") == b.Unmap().WithZone("")
}

// checkLinkLocal refuses u, a URL to fetch (a media URL, a redirect's
// Location), when its host is a link-local address and not the base URL's
// own host. what says what u is, for the message.
func (c *Client) checkLinkLocal(u *url.URL, what string) error {
	if h := u.Hostname(); linkLocalAddr(h) && !c.ownHost(h) {
		return fmt.Errorf("refusing to %s %s: %s is a link-local address, and not the host of the base URL; %w", what, redactURL(u), h, ErrLinkLocal)
	}
	return nil
}

// dialContext is the dialer of the client's own transport: as
// net/http's, but a connection to a link-local address is refused once
// the name is resolved, so that no host name (metadata.google.internal,
// or a number the system's resolver reads as an IPv4 address) reaches
// it, unless it is the base URL's own host.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if host, _, err := net.SplitHostPort(addr); err != nil || !c.ownHost(host) {
		d.ControlContext = refuseLinkLocal
	}
	return d.DialContext(ctx, network, addr)
}

// refuseLinkLocal is a net.Dialer's ControlContext: it fails a connection
// about to be opened to a link-local address.
func refuseLinkLocal(_ context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if linkLocalAddr(host) {
		return fmt.Errorf("refusing to connect to %s, a link-local address: %w", host, ErrLinkLocal)
	}
	return nil
}
