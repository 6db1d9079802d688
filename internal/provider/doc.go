// Package provider is the seam every generation API genform pays plugs
// into: the reference service first (package provider/reference), then
// the live providers. A Provider submits a job (sending a create again
// only where the answer proves nothing was made or charged), follows it,
// fetches its result and downloads its files; a Recoverer can also find
// again a job whose create answer was lost.
//
// It defines what a request, a job, a status and a result are, in terms
// every provider shares, and the error (ErrPossiblyPaid) that marks a
// create whose outcome is not known; the errors, types and hooks of the
// HTTP client every provider goes through (package apiclient), as the
// engine, the operations and the views meet them (transport.go); and
// Registration, what a provider's folder declares of it for the one list
// of providers (package provider/all): its table, adapter, simulator and
// the rows of its conformance and live tests. It does not decide what to
// generate (the planner does), keep state (the apply engine records every
// job), or build request bodies (package config and each table do).
//
// It also holds what the live providers' adapters share: Base (the
// client built from a Config, the identity, Download and the key's
// check), Fetch (a read of one of the provider's objects), Polled (a
// job followed by reading it again, its answer once done held for the
// result), the text of a failure, and the window and the one-match rule
// of a Recoverer's search.
package provider
