// Package configtest gives the tests of the packages that take a
// configuration (reconcile, reconcile/apply) one loaded as genform loads
// it: written as the main.gen.hcl of a working directory, and refused
// with its diagnostics when it does not load. It holds no test of its
// own, and is imported by tests only.
//
// Package config's own tests cannot import it (it imports config); they
// write their files with package dirtest.
package configtest
