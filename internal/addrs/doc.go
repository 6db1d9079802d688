// Package addrs is how genform names things: the kinds of resource
// (image, video), resource addresses (image.hero), instance addresses
// (image.hero[0], image.hero["red"]), module instance addresses
// (module.brand["a"], which prefix the addresses of the resources in
// them; interned, see Module) and the service's job-creation endpoints a
// request goes to.
//
// It owns parsing, printing, ordering and shell quoting of those names, so
// that the configuration, the planner, the state store's keys and every
// command spell, sort and quote an address the same way. Printing is
// canonical: parsing a printed address gives the same address back, and two
// equal addresses print the same.
//
// It imports nothing else of genform, so every package may use it: the
// state store keys its records by these addresses without knowing about
// the configuration, and the service client names its endpoints with them
// without knowing how a request is built.
package addrs
