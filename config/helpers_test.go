package config

import (
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/dirtest"
)

// mustLoad loads src as main.gen.hcl and fails the test on any error.
func mustLoad(t testing.TB, src string, opts Options) *Config {
	t.Helper()
	c, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": src}), opts)
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diagList(diags))
	}
	return c
}

// expandAll expands every resource in order, each seeing the ones before
// it as unknown, and returns the instances by address.
func expandAll(t testing.TB, c *Config, scope Scope) map[string]*Instance {
	t.Helper()
	out := map[string]*Instance{}
	if scope == nil {
		scope = Scope{}
	}
	for _, r := range c.Resources {
		insts, diags := c.Expand(r, scope)
		if diags.HasErrors() {
			t.Fatalf("Expand %s: %s", r.Addr(), diagList(diags))
		}
		for _, in := range insts {
			out[in.Addr.String()] = in
		}
		if _, ok := scope[r.Addr()]; !ok {
			scope[r.Addr()] = ResourceValue(r, insts, nil)
		}
	}
	return out
}

// loadErrors loads src and returns its diagnostics, failing when there are
// none.
func loadErrors(t testing.TB, src string, opts Options) hcl.Diagnostics {
	t.Helper()
	_, diags := loadTest(dirtest.New(t, map[string]string{"main.gen.hcl": src}), opts)
	if !diags.HasErrors() {
		t.Fatalf("Load passed; want errors")
	}
	return diags
}

// res parses a resource address for a test.
func res(s string) addrs.Resource { return inst(s).Resource }

// inst parses an instance address for a test.
func inst(s string) addrs.Instance {
	a, err := addrs.ParseInstance(s)
	if err != nil {
		panic(err)
	}
	return a
}
