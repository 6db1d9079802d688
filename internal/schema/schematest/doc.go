// Package schematest is what the tests of the providers' tables share:
// cases of a provider's Body, run as subtests.
package schematest
