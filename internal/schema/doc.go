// Package schema is what the providers' tables are written in, the
// configuration's view of a provider (after Terraform's configschema):
// a provider's table (Provider: its name, the environment variable of its
// key, its public address, how a lost create can be found again, how long
// its output URLs live, its documented limits, and for each model it lists
// (and in general, for the models it does not) what it makes and which of
// the common attributes it takes, with the counts and lengths it allows,
// and how the common attributes map to its own fields, Provider.Body); and
// what an endpoint of the reference service takes (Endpoint), with the
// checks that say why a value is refused, and the limits genform keeps to
// in every request (prompt length, seed range, source images).
//
// It is a leaf: each provider's folder writes its table in these types,
// package catalog registers them by name, config validates blocks and
// builds requests from them through config.Providers, and genform
// providers prints them. It holds no network code, no state and no
// provider's facts. A check returns "" for a value it allows and otherwise
// a reason that completes a sentence whose subject is the field, such as
// "must be 2, 4, 6 or 8 (seconds)".
package schema
