// Package apitest is what the tests of the HTTP client (package
// apiclient) and of the APIs built on it share: a test server that
// records every request, a clock that records waits instead of
// sleeping, and a few answers and file signatures.
package apitest
