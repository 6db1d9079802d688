package pgstate

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The connection string may hold a password (in a URL's user info or its
// password parameter, or libpq's password=, quoted or escaped however
// libpq allows) and the passphrase of the client key (sslpassword). It is
// read only by pgx's own parser, and never printed or stored: a parse
// error is reported without pgx's text (which quotes it, masking the
// passwords it recognizes), and what genform init remembers is a
// connection string rebuilt from the parts that say where the server and
// database are (reconnectString).

// parse is pgx.ParseConfig, with an error that never quotes conn.
func parse(conn string) (*pgx.ConnConfig, error) {
	pcfg, err := pgx.ParseConfig(conn)
	if err == nil {
		return pcfg, nil
	}
	// A file the string names (sslrootcert, sslcert, sslkey, a service
	// file) that cannot be read is worth naming; anything else may be a
	// piece of the string.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("the connection string (conn_str or PG_CONN_STR) names a file genform cannot read: %w", pe)
	}
	return nil, errors.New("the connection string (conn_str or PG_CONN_STR) cannot be read; it is not shown here, since it may hold a password: check that it is a postgres:// URL or libpq's key=value pairs (values with spaces quoted), and its port, sslmode and ssl* settings")
}

// Location is where a state is kept, without a password: what genform
// init remembers of the storage a working copy used.
type Location struct {
	Host     string
	Port     uint16
	Database string
	User     string
	Schema   string
	// ConnString reaches the state again, with the password from
	// PGPASSWORD or ~/.pgpass: a key=value string rebuilt from the
	// servers (every host and port), database, user, the TLS settings
	// (sslmode, and the CA, client certificate and key files) and the
	// connect timeout the connection string resolves to. Nothing else of
	// it is kept: not a password, an sslpassword, or a parameter genform
	// does not know, which could be one.
	ConnString string
}

// Locate resolves cfg as Open would, without connecting.
func Locate(cfg Config) (Location, error) {
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	pcfg, err := parse(cfg.ConnString)
	if err != nil {
		return Location{}, fmt.Errorf("the PostgreSQL state: %w", err)
	}
	return Location{Host: pcfg.Host, Port: pcfg.Port, Database: pcfg.Database, User: pcfg.User, Schema: cfg.Schema,
		ConnString: reconnectString(&pcfg.Config, conn(cfg.ConnString))}, nil
}

// String names the location as messages do.
func (l Location) String() string {
	return fmt.Sprintf("postgres://%s/%s (schema %s)", net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))), l.Database, l.Schema)
}

// conn is a connection string, as written.
type conn string

// reconnectString rebuilds a connection string reaching the server and
// database of pcfg (parsed from c), from what pgx made of it: the hosts
// and ports, the database, the user, the TLS mode, and the connect
// timeout. The CA, client certificate and key files, and passfile, are
// paths pgx does not keep; they are taken from c, or else the environment
// (PGSSLROOTCERT, ...), and kept only when the file there is the one pgx
// loaded.
func reconnectString(pcfg *pgconn.Config, c conn) string {
	type server struct {
		host string
		port uint16
		tls  []*tls.Config
	}
	var servers []server
	for i, fb := range append([]*pgconn.FallbackConfig{{Host: pcfg.Host, Port: pcfg.Port, TLSConfig: pcfg.TLSConfig}}, pcfg.Fallbacks...) {
		// sslmode prefer and allow try each server twice: with TLS and
		// without.
		if n := len(servers); i > 0 && n > 0 && servers[n-1].host == fb.Host && servers[n-1].port == fb.Port && len(servers[n-1].tls) == 1 {
			servers[n-1].tls = append(servers[n-1].tls, fb.TLSConfig)
			continue
		}
		servers = append(servers, server{host: fb.Host, port: fb.Port, tls: []*tls.Config{fb.TLSConfig}})
	}
	var hosts, ports []string
	var first []*tls.Config // the TLS of the first server reached over TCP
	for _, s := range servers {
		hosts = append(hosts, s.host)
		ports = append(ports, strconv.Itoa(int(s.port)))
		if network, _ := pgconn.NetworkAddress(s.host, s.port); network != "unix" && first == nil {
			first = s.tls
		}
	}
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+quoteValue(v))
		}
	}
	add("host", strings.Join(hosts, ","))
	add("port", strings.Join(ports, ","))
	add("dbname", pcfg.Database)
	add("user", pcfg.User)
	if first != nil {
		add("sslmode", sslMode(first))
		if pcfg.SSLNegotiation == "direct" {
			add("sslnegotiation", "direct")
		}
		if m := pcfg.SSLCertMode; m != "" && m != "allow" {
			add("sslcertmode", m)
		}
		if t := first[0]; t != nil {
			given := c.settings()
			add("sslrootcert", rootCert(t, given))
			if cert, key := clientCert(t, given); cert != "" {
				add("sslcert", cert)
				add("sslkey", key)
			}
		}
	}
	if p := c.settings()["passfile"]; p != "" && regularFile(p) {
		add("passfile", p)
	}
	if pcfg.ConnectTimeout > 0 {
		add("connect_timeout", strconv.Itoa(int(pcfg.ConnectTimeout.Seconds())))
	}
	return strings.Join(kv, " ")
}

// sslMode is the sslmode that makes the TLS configurations pgx builds for
// one server: tried in turn, nil meaning without TLS.
func sslMode(t []*tls.Config) string {
	switch {
	case len(t) == 2 && t[0] == nil:
		return "allow"
	case len(t) == 2:
		return "prefer"
	case t[0] == nil:
		return "disable"
	case !t[0].InsecureSkipVerify:
		return "verify-full"
	case t[0].VerifyPeerCertificate != nil:
		return "verify-ca" // also require with a CA file, as libpq has it
	}
	return "require"
}

// rootCert is the sslrootcert that gives t its CA pool, when pgx was given
// one: "system", or the file given (in the string, or PGSSLROOTCERT)
// whose certificates are the pool's. "" when there is none, or it is the
// default (~/.postgresql/root.crt), which pgx reads again by itself.
func rootCert(t *tls.Config, given map[string]string) string {
	if t.RootCAs == nil {
		return ""
	}
	for _, p := range []string{given["sslrootcert"], os.Getenv("PGSSLROOTCERT")} {
		if p == "system" {
			return p
		}
		if p == "" || !regularFile(p) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM(b) && pool.Equal(t.RootCAs) {
			return p
		}
	}
	return ""
}

// clientCert is the sslcert and sslkey files given (in the string, or
// PGSSLCERT and PGSSLKEY) when the first certificate of the one is t's
// client certificate and the other holds a private key.
func clientCert(t *tls.Config, given map[string]string) (cert, key string) {
	if len(t.Certificates) == 0 || len(t.Certificates[0].Certificate) == 0 {
		return "", ""
	}
	for _, p := range [][2]string{{given["sslcert"], given["sslkey"]}, {os.Getenv("PGSSLCERT"), os.Getenv("PGSSLKEY")}} {
		if p[0] == "" || p[1] == "" || !regularFile(p[0]) || !regularFile(p[1]) {
			continue
		}
		cb, err1 := os.ReadFile(p[0])
		kb, err2 := os.ReadFile(p[1])
		if err1 != nil || err2 != nil {
			continue
		}
		c, _ := pem.Decode(cb)
		k, _ := pem.Decode(kb)
		if c != nil && string(c.Bytes) == string(t.Certificates[0].Certificate[0]) && k != nil && strings.HasSuffix(k.Type, "PRIVATE KEY") {
			return p[0], p[1]
		}
	}
	return "", ""
}

func regularFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// settings reads c's parameters as libpq writes them, for the file paths
// pgx does not keep. It is no parser to trust: what it finds is kept only
// when the file it names is the one pgx read.
func (c conn) settings() map[string]string {
	s := string(c)
	out := map[string]string{}
	if rest, ok := strings.CutPrefix(s, "postgres://"); ok || strings.HasPrefix(s, "postgresql://") {
		if !ok {
			rest = strings.TrimPrefix(s, "postgresql://")
		}
		// The user info ends at the first @ before a /, as pgx has it.
		if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
			rest = rest[i+1:]
		}
		if i := strings.IndexByte(rest, '?'); i >= 0 {
			q, _ := url.ParseQuery(rest[i+1:])
			for k, v := range q {
				out[k] = v[len(v)-1]
			}
		}
		return out
	}
	const space = " \t\n\r\v\f"
	s = strings.TrimLeft(s, space)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return out
		}
		key := strings.Trim(s[:eq], space)
		s = strings.TrimLeft(s[eq+1:], space)
		var val strings.Builder
		quoted := strings.HasPrefix(s, "'")
		if quoted {
			s = s[1:]
		}
		i := 0
		for ; i < len(s); i++ {
			ch := s[i]
			if (quoted && ch == '\'') || (!quoted && strings.IndexByte(space, ch) >= 0) {
				break
			}
			if ch == '\\' && i+1 < len(s) {
				i++
				ch = s[i]
			}
			val.WriteByte(ch)
		}
		if quoted {
			i++ // the closing quote
		}
		out[key] = val.String()
		s = strings.TrimLeft(s[min(i, len(s)):], space)
	}
	return out
}

// quoteValue writes v as a key=value value: quoted when it is empty or
// holds a space, a quote or a backslash.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
