// Package rules is the reference service's table of accepted values: for
// each job-creation endpoint, the values and limits its request fields
// take (schema.Endpoint, whose checks say why a value is refused).
//
// Two packages read the one table. Package config checks every
// instance's request against it (through the service's table, which the
// one list of providers registers) when it evaluates the configuration, so
// `genform validate` and `genform plan` refuse a value before anything is
// paid for, and an apply refuses a value known only then before it is
// sent. Package simulator answers its 400s from it. A request genform
// accepts is therefore a request the simulator accepts, and the reasons
// read the same in a diagnostic and in an error answer.
//
// Every rule says where it comes from, with the marks of docs/service.md:
// [interface] the service's interface description states it; [published]
// the service's public documentation or its own client shows it;
// [simulator] the service leaves the value open and the simulator chose
// it, so the real service may accept more, and genform refuses it anyway
// rather than send a request the simulator would refuse.
//
// The package knows values, not syntax or wire: no HCL, no JSON, no HTTP.
package rules
