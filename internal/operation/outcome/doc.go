// Package outcome holds what the operations hand to the views beyond the
// engine's own types (plans, apply results, state records): the services
// a plan is made with, the warnings an operation goes on despite, what
// pull and push moved, and what state rm and state mv did. It is data
// only, with no words: package views (through package words) says it.
//
// It sits below both package operation, which fills it, and package
// views, which renders it, so that views never imports operation. It
// imports nothing of the module but addrs.
package outcome
