package pgstate

import (
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Secrets names the secret parameters connString itself holds, as pgx
// reads it: "password" (in any of its forms) and "sslpassword", never
// their values. Those that come from the environment (PGPASSWORD) or a
// file (~/.pgpass) are not counted: they are where a password belongs.
func Secrets(connString string) []string {
	var found []string
	for _, k := range []string{"password", "sslpassword"} {
		if holds(connString, k) {
			found = append(found, k)
		}
	}
	return found
}

// knownKeys are the parameters pgx reads itself, besides the run-time
// parameters it passes on to the server.
var knownKeys = []string{"host", "port", "database", "dbname", "user", "password", "passfile", "connect_timeout",
	"sslmode", "ssl", "sslkey", "sslcert", "sslcertmode", "sslrootcert", "sslnegotiation", "sslpassword", "sslsni",
	"krbspn", "krbsrvname", "target_session_attrs", "service", "servicefile", "min_protocol_version",
	"max_protocol_version", "channel_binding", "require_auth"}

// holds reports whether connString sets key, asking pgx's parser: it
// refuses a string with a key outside ConnStringAllowedKeys before reading
// anything else, naming the key, so every other key it names is allowed
// in turn until it names key or accepts the string. (A parameter pgx
// passes on to the server is any name at all.) It reads the text of
// pgx's refusal: TestSecrets fails if an upgrade of pgx changes it.
func holds(connString, key string) bool {
	allowed := slices.DeleteFunc(slices.Clone(knownKeys), func(k string) bool { return k == key })
	for range 100 {
		_, err := pgconn.ParseConfigWithOptions(connString, pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowed})
		var pe *pgconn.ParseConfigError
		if !errors.As(err, &pe) {
			return false
		}
		named, ok := refusedKey(pe)
		switch {
		case !ok:
			// Every key passed (it failed later: a file it names), or
			// the string cannot be read at all.
			return false
		case named == key:
			return true
		}
		allowed = append(allowed, named)
	}
	return false
}

// refusedKey is the key a ParseConfigError says is not allowed.
func refusedKey(pe *pgconn.ParseConfigError) (string, bool) {
	msg := pe.Error()
	const tail = `" is not in ConnStringAllowedKeys`
	end := strings.LastIndex(msg, tail)
	if end < 0 {
		return "", false
	}
	start := strings.LastIndex(msg[:end], `key "`)
	if start < 0 {
		return "", false
	}
	return msg[start+len(`key "`) : end], true
}
