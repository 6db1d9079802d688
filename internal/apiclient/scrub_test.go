package apiclient

import (
	"testing"
)

// A key is redacted where it stands as a whole token, never inside a
// longer word that holds it: with the key "sim", "simulator" stays whole
// while every way a service could echo the key is still redacted.
func TestScrubRedactsWholeTokensOnly(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", func(cfg *Config) { cfg.Token = "sim" })
	for _, tt := range []struct{ in, want string }{
		// Inside other words and names: kept.
		{"internal server error (injected by the simulator's error rate)", "internal server error (injected by the simulator's error rate)"},
		{"GET http://127.0.0.1:8787/_sim/jobs", "GET http://127.0.0.1:8787/_sim/jobs"},
		{"a simple simile, simsim, resim", "a simple simile, simsim, resim"},
		{"sim-key sim_2 sim.example.com api.sim", "sim-key sim_2 sim.example.com api.sim"},
		{"résim simé", "résim simé"},
		{"%3Dsimulator", "%3Dsimulator"},
		// Sent or echoed as the key: redacted.
		{"Authorization: Bearer sim", "Authorization: Bearer [redacted]"},
		{"Authorization: Key sim\r\n", "Authorization: Key [redacted]\r\n"},
		{"GET /x?key=sim", "GET /x?key=[redacted]"},
		{"GET /x?key=sim&n=1", "GET /x?key=[redacted]&n=1"},
		{`{"token":"sim"}`, `{"token":"[redacted]"}`},
		{"sim", "[redacted]"},
		{"invalid key sim.", "invalid key [redacted]."},
		{"the key (sim), «sim», “sim”", "the key ([redacted]), «[redacted]», “[redacted]”"},
		{"next=%2Fx%3Fkey%3Dsim", "next=%2Fx%3Fkey%3D[redacted]"},
		{"next=%252Fx%253Fkey%253Dsim", "next=%252Fx%253Fkey%253D[redacted]"},
		{`"line\nsim"`, `"line\n[redacted]"`},
		{`\u0022sim\u0022 \x22sim\x22`, `\u0022[redacted]\u0022 \x22[redacted]\x22`},
		{"/cdn/sim/0.png", "/cdn/[redacted]/0.png"},
		{"simulator says sim", "simulator says [redacted]"},
	} {
		if got := c.scrubText(tt.in); got != tt.want {
			t.Errorf("scrubText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A key with characters that are escaped is redacted in each of its
// spellings, on its own or wherever it is bounded, not where a longer
// word holds it; a replacement is never matched again.
func TestScrubWholeTokenForms(t *testing.T) {
	c, _ := newClient(t, "http://127.0.0.1:1", func(cfg *Config) { cfg.Token = "ab/cd" })
	for _, tt := range []struct{ in, want string }{
		{"t=ab%2Fcd&u=1", "t=[redacted]&u=1"},
		{"t=ab%2fcd", "t=[redacted]"},
		{`{"t":"ab\/cd"}`, `{"t":"[redacted]"}`},
		{"Bearer ab/cd", "Bearer [redacted]"},
		{"xab/cdx and grab/cdrom", "xab/cdx and grab/cdrom"},
	} {
		if got := c.scrubText(tt.in); got != tt.want {
			t.Errorf("scrubText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	r, _ := newClient(t, "http://127.0.0.1:1", func(cfg *Config) { cfg.Token = "redacted" })
	if got := r.scrubText("key redacted"); got != "key [redacted]" {
		t.Errorf("the key \"redacted\": %q, want it replaced once", got)
	}
}
