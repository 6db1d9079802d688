// Package catalog is the tables of the providers genform speaks, by
// name: the one list of providers (package provider/all) registers each
// provider's table (a schema.Provider, from its own folder) here, and
// whoever needs a provider's facts looks it up, by the name its endpoints
// carry. Tables is that lookup as the configuration asks for it.
package catalog
