// Package catalog is the tables of the live providers genform speaks:
// for each, its name, the environment variable of its key, its public
// address, how a lost create can be found again, how long its output URLs
// live, its documented limits, and for each model it lists (and in
// general, for the models it does not) what it makes and which of the
// common attributes it takes, with the counts and lengths it allows.
// Each provider's file also maps the common attributes to the provider's
// own fields (Provider.Body).
//
// It is a leaf: config reads it to validate blocks and build their
// requests, the providers' adapters to speak their APIs, and genform
// providers prints it. It holds no network code and no state. Every fact
// in it comes from the provider's public reference or official client,
// named beside it.
package schema
