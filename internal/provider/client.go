package provider

import (
	"cmp"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/genform/genform/internal/apiclient"
)

// Auth is how a provider takes its key.
type Auth struct {
	// Scheme is the Authorization scheme its API takes the key with
	// ("Bearer", "Key").
	Scheme string
	// PublicFiles says its output files are public URLs that take no key
	// (fal's CDN): a download then never carries the key, not even from
	// the API's own origin (a simulator serving both).
	PublicFiles bool
	// KeyRefusals are the statuses its reference documents as a refused
	// key (apiclient.Config.KeyRefusals); nil is 401 and 403. Any other
	// refusal, a 403 about a model or an account's state included, fails
	// the request it answers, never the whole apply as a refused key.
	KeyRefusals []int
}

// NewClient is the HTTP client of a live provider's adapter, built from
// cfg: its base URL (publicURL when cfg leaves it empty), the key sent as
// auth says, the request budget, the download cap, the trace and the
// retry hook. Every adapter sends all its requests through one such
// client.
func NewClient(cfg Config, publicURL string, auth Auth) (*apiclient.Client, error) {
	return apiclient.New(apiclient.Config{
		BaseURL:           cmp.Or(cfg.BaseURL, publicURL),
		Token:             cfg.Key,
		AuthScheme:        auth.Scheme,
		PublicFiles:       auth.PublicFiles,
		KeyRefusals:       auth.KeyRefusals,
		RequestsPerMinute: cfg.RequestsPerMinute,
		// A provider's rate limits are on its API; its files come from a
		// CDN.
		DownloadsOutsideBudget: true,
		MaxDownloadSize:        cfg.MaxDownloadSize,
		HTTPClient:             cfg.HTTPClient,
		Debug:                  cfg.Debug,
		UserAgent:              cfg.UserAgent,
		OnRetry:                cfg.OnRetry,
	})
}

// IDOf is the identity of provider name in fingerprints: its name, with
// the base URL the client uses when that is not the public one, so that
// a job made on a simulator is never taken for one made on the provider.
func IDOf(name string, c *apiclient.Client, publicURL string) string {
	if base := c.BaseURL(); strings.TrimRight(base, "/") != strings.TrimRight(publicURL, "/") {
		return name + "@" + base
	}
	return name
}

// ErrorText is a provider's error value as text: a string as it is,
// anything else as JSON, nothing as "".
func ErrorText(v any) string {
	switch e := v.(type) {
	case nil:
		return ""
	case string:
		return e
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ValidID reports whether id, handed out by a provider, is an opaque
// word: non-empty, at most 256 bytes, with no space or character that
// cannot be printed.
func ValidID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for _, r := range id {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
