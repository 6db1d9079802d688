// Package words says in English what the engine decides with codes: why
// a change is planned (Reason, Local), what a reviewer must know before
// applying it (Warnings), what an import noticed, what an apply's events
// and retries mean, what an operation went on despite (OperationWarning,
// from the data package operation/outcome holds), and what to do when
// the service as a whole cannot be used. Every view writes them through
// it, the human plan, the pull-request comment and the JSON documents
// alike, so a reason reads the same everywhere.
//
// It returns strings and writes nothing; it does not colour, lay out or
// encode them (the views and the formats do), and it decides nothing.
package words
