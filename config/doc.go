// Package config holds the configuration as written and evaluates it into
// requests; it never touches the network or the state.
//
// Load reads every *.gen.hcl and *.gen.json file of a working directory as
// one configuration, decodes it against explicit hcl.BodySchema values into
// typed declarations that keep their source ranges (the genform, service,
// variable, locals, image, video, output, moved and module blocks), settles the input
// variables (default < GENFORM_VAR_<name> < -var-file < -var), evaluates the
// locals that do not depend on resources, orders the resources by their
// references and checks everything that can be checked without knowing any
// resource's value, every request value against what its provider takes
// among it, and every reference to an output a
// resource will not make (outputs[3] of an image with image_number = 1).
// A module block loads the folder it names (a local path) as a
// configuration of its own for each of its instances, with the call's
// arguments as its variables; its resources join the root module's,
// addressed under the module instance (module.NAME["k"].image.x), and
// module.NAME.OUTPUT evaluates its outputs (module.go).
// Moved blocks are checked against one another and the declared
// resources (no cycle, no from still declared, a chain ends at a
// declared address), and Config.MoveTarget follows them from an address
// the state holds; planning makes the moves.
// A variable given no value is an error, or, with Options.UnknownUnset
// (validate, init), an unknown value checked for whatever it will be.
// Every problem is returned as an hcl.Diagnostic with a source range, all
// of a run's problems together. Parsing is HCL's (hclsyntax), except that
// a file in the plain subset large generated configurations are written
// in is parsed by fastParse into the very tree hclsyntax would build, at a
// tenth of the cost; a large file is parsed in pieces on every core and
// kept as bytes, its tree parsed again only if a diagnostic or a caller
// needs it.
//
// Expand turns one resource into its instances for a given Scope (the values
// of the resources it refers to, as the caller knows them): for each instance
// the endpoint its request goes to, the exact JSON body with the service's
// documented defaults filled in, and the local-only settings (output
// directory, watermark-free download). It checks the values that became
// known by the same rules, so an apply never sends a value Load could not
// check and the service would refuse. Fingerprint hashes such a request;
// the token never enters it. The values of sensitive variables are marked,
// so an instance knows which of its attributes are made from one
// (Instance.Sensitive) while its request holds the real values.
//
// It also holds what the packages after it share of the language: JSON and
// JSONValue are the one conversion of cty values to JSON, AttrNames and
// SortAttrNames the one order of attributes every view uses. Names of
// things (addresses, kinds, endpoints) are its subpackage addrs.
//
// It knows the language, not the providers: what each provider a block may
// name takes, and what the reference service (the provider of a block that
// names none) takes at each of its endpoints, reach it through the
// Providers the caller hands in (Options.Providers), as the types of
// package schema; it builds the reference service's request in the
// language's own shape (every leaf of the request is an attribute) and has
// a live provider's table build a model's (schema.Provider.Body), adding
// the positions and words of every diagnostic.
//
// What the package does not do: it does not know what exists (that is the
// state, package statefile), it does not decide what to change (package
// reconcile), it names no provider, and it does not talk to any. Values
// that only an apply can produce (creation ids, output URLs) arrive through
// the Scope, or stay cty unknowns.
package config
