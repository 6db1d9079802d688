package pgstate_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genform/genform/statefile/pgstate"
)

// clearPGEnv leaves libpq's variables unset for the test, so that the
// machine's do not change what a connection string resolves to.
func clearPGEnv(t *testing.T) {
	for _, k := range []string{"PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE", "PGSSLPASSWORD",
		"PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "PGPASSFILE", "PGSERVICE", "PGOPTIONS", "PGAPPNAME", "PGCONNECT_TIMEOUT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", t.TempDir()) // no ~/.pgpass, no ~/.postgresql
}

// TestLocateKeepsOnlyWhereTheServerIs checks what genform init remembers
// of a PostgreSQL state, for every form of connection string pgx reads: a
// key=value string rebuilt from the hosts and ports, database, user, TLS
// mode and connect timeout, which reaches the same server again and never
// holds a password, an sslpassword, or a parameter genform does not know
// (which could be one), however the original was written.
func TestLocateKeepsOnlyWhereTheServerIs(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("*:*:*:*:frompassfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, conn string
		env        map[string]string
		want       string
		secrets    []string
	}{
		{"URL, user info", "postgres://team:hunter2@db.example.com:5433/media?sslmode=require",
			nil, "host=db.example.com port=5433 dbname=media user=team sslmode=require", []string{"hunter2"}},
		{"URL, password parameter", "postgres://team@db.example.com/media?password=hunter2&sslmode=disable",
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=disable", []string{"hunter2"}},
		{"URL, percent-encoded", "postgresql://te%40m:p%40ss%20w0rd@db.example.com/me%64ia?pass%77ord=other%2Fsecret",
			nil, "host=db.example.com port=5432 dbname=media user=te@m sslmode=prefer", []string{"p@ss", "p%40ss", "w0rd", "other", "secret"}},
		{"URL, parameters", "postgres://team@db.example.com/media?application_name=nightly&options=-c%20search_path%3Dx&sslpassword=keypass&connect_timeout=7&target_session_attrs=any&api_token=tok3n",
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=prefer connect_timeout=7", []string{"keypass", "tok3n", "nightly", "search_path"}},
		{"URL, hosts", "postgres://team:hunter2@db1.example.com:5432,db2.example.com:5433/media?sslmode=disable",
			nil, "host=db1.example.com,db2.example.com port=5432,5433 dbname=media user=team sslmode=disable", []string{"hunter2"}},
		{"key=value", "host=db.example.com port=5433 user=team password=hunter2 dbname=media",
			nil, "host=db.example.com port=5433 dbname=media user=team sslmode=prefer", []string{"hunter2"}},
		{"key=value, spaces around =", "host = db.example.com user = team password = hunter2 dbname = media",
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=prefer", []string{"hunter2"}},
		{"key=value, quoted", "host=db.example.com user=team password='hun ter2' dbname=media",
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=prefer", []string{"hun", "ter2"}},
		{"key=value, escaped quote", `host=db.example.com user=team password='it\'s ter2' dbname=media`,
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=prefer", []string{"it", "ter2"}},
		{"key=value, escaped space", `host=db.example.com user=team password=hunter\ twotail dbname=media`,
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=prefer", []string{"hunter", "twotail"}},
		{"key=value, sslpassword and passfile", "host=db.example.com user=team dbname=media sslmode=disable sslpassword=keypass passfile=" + passfile,
			nil, "host=db.example.com port=5432 dbname=media user=team sslmode=disable passfile=" + passfile, []string{"keypass", "frompassfile"}},
		{"key=value, a quoted user", `host=db.example.com user='data team' dbname=media sslmode=disable`,
			nil, `host=db.example.com port=5432 dbname=media user='data team' sslmode=disable`, nil},
		{"key=value, hosts", "host=db1.example.com,db2.example.com port=5432,5433 user=team dbname=media sslmode=allow application_name=x",
			nil, "host=db1.example.com,db2.example.com port=5432,5433 dbname=media user=team sslmode=allow", nil},
		{"key=value, a socket", "host=/var/run/postgresql user=team dbname=media",
			nil, "host=/var/run/postgresql port=5432 dbname=media user=team", nil},
		{"the environment", "",
			map[string]string{"PGHOST": "db.example.com", "PGPORT": "5433", "PGUSER": "team", "PGPASSWORD": "hunter2", "PGDATABASE": "media",
				"PGSSLMODE": "verify-full", "PGSSLPASSWORD": "keypass", "PGAPPNAME": "nightly", "PGOPTIONS": "-c search_path=x"},
			"host=db.example.com port=5433 dbname=media user=team sslmode=verify-full", []string{"hunter2", "keypass", "nightly"}},
		{"the environment and a string", "dbname=other password=hunter2",
			map[string]string{"PGHOST": "db.example.com", "PGUSER": "team", "PGCONNECT_TIMEOUT": "3"},
			"host=db.example.com port=5432 dbname=other user=team sslmode=prefer connect_timeout=3", []string{"hunter2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearPGEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			loc, err := pgstate.Locate(pgstate.Config{ConnString: c.conn, Schema: "proj"})
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if loc.ConnString != c.want {
				t.Errorf("ConnString = %q, want %q", loc.ConnString, c.want)
			}
			for _, s := range append(c.secrets, "password") {
				if strings.Contains(loc.ConnString, s) && !strings.Contains(c.want, s) {
					t.Errorf("ConnString %q holds %q", loc.ConnString, s)
				}
			}
			// It reaches the same server, database and user, without the
			// environment, and rebuilds to itself.
			for k := range c.env {
				t.Setenv(k, "")
			}
			again, err := pgstate.Locate(pgstate.Config{ConnString: loc.ConnString, Schema: "proj"})
			if err != nil {
				t.Fatalf("Locate(%q): %v", loc.ConnString, err)
			}
			if again.Host != loc.Host || again.Port != loc.Port || again.Database != loc.Database || again.User != loc.User || again.ConnString != loc.ConnString {
				t.Errorf("the rebuilt string locates %+v, the original %+v", again, loc)
			}
		})
	}
}

// TestLocateKeepsTheTLSFiles checks that the CA, client certificate and
// key files a connection string names (or PGSSLROOTCERT, ...) are kept,
// being needed to reach the server again, while the key's passphrase is
// not; and that sslrootcert=system is kept as it is.
func TestLocateKeepsTheTLSFiles(t *testing.T) {
	clearPGEnv(t)
	dir := t.TempDir()
	ca, cert, key := filepath.Join(dir, "root ca.crt"), filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	writeCert(t, ca, "")
	writeCert(t, cert, key)
	conn := "host=db.example.com user=team dbname=media sslmode=verify-full sslrootcert='" + ca + "' sslcert=" + cert + " sslkey=" + key + " sslpassword=keypass"
	loc, err := pgstate.Locate(pgstate.Config{ConnString: conn})
	if err != nil {
		t.Fatal(err)
	}
	want := "host=db.example.com port=5432 dbname=media user=team sslmode=verify-full sslrootcert='" + ca + "' sslcert=" + cert + " sslkey=" + key
	if loc.ConnString != want {
		t.Errorf("ConnString = %q, want %q", loc.ConnString, want)
	}

	t.Setenv("PGSSLROOTCERT", ca)
	loc, err = pgstate.Locate(pgstate.Config{ConnString: "postgres://team@db.example.com/media?sslmode=verify-ca"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "host=db.example.com port=5432 dbname=media user=team sslmode=verify-ca sslrootcert='" + ca + "'"; loc.ConnString != want {
		t.Errorf("with PGSSLROOTCERT: ConnString = %q, want %q", loc.ConnString, want)
	}
	t.Setenv("PGSSLROOTCERT", "")

	loc, err = pgstate.Locate(pgstate.Config{ConnString: "postgres://team@db.example.com/media?sslrootcert=system"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "host=db.example.com port=5432 dbname=media user=team sslmode=verify-full sslrootcert=system"; loc.ConnString != want {
		t.Errorf("sslrootcert=system: ConnString = %q, want %q", loc.ConnString, want)
	}
}

// writeCert writes a self-signed certificate to certPath, and its key to
// keyPath when it is not "".
func writeCert(t *testing.T, certPath, keyPath string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: filepath.Base(certPath)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if keyPath != "" {
		kb, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocateErrorsDoNotQuote checks that a connection string pgx cannot
// read is refused without a piece of it in the message: pgx's own error
// quotes it, masking only the passwords it recognizes.
func TestLocateErrorsDoNotQuote(t *testing.T) {
	clearPGEnv(t)
	for _, conn := range []string{
		"host=db.example.com password=hunter2 twotail dbname=media",
		"postgres://team:hunter2@db.example.com:54x32/media",
		"host=db.example.com password='hunter2 twotail",
		"postgres://team@db.example.com/media?password=hunter2&sslmode=sometimes",
	} {
		_, err := pgstate.Locate(pgstate.Config{ConnString: conn})
		if err == nil {
			t.Errorf("Locate(%q) succeeded", conn)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "twotail") || strings.Contains(err.Error(), "db.example.com") {
			t.Errorf("Locate(%q) = %v: it quotes the string", conn, err)
		}
	}
	// A file it names that is missing is named.
	_, err := pgstate.Locate(pgstate.Config{ConnString: "host=db.example.com sslmode=verify-ca sslrootcert=/nonexistent/ca.crt password=hunter2"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.crt") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a missing CA file: %v", err)
	}
}
