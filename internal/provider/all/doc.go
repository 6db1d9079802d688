// Package all is the one list of the providers genform speaks: the
// reference service and every live provider, each a Registration its own
// folder declares. Everything that needs the providers reads this list:
// the operations (adapters), genform sim (simulators), genform providers
// and configuration (capability tables, registered with package catalog
// when this package is loaded), the conformance suite, the script tests
// and the check of the docs' provider table. Adding a provider is its
// folder and a line here.
package all
