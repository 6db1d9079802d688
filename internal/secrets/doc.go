// Package secrets hides what is made from a secret in everything genform
// shows: the values of sensitive variables and of the service token, and
// the attributes a configuration makes from them. Every view goes through
// it: the human plan, the pull-request comment and the JSON plan (a plan
// names its sensitive attributes, and HidePlan adds those whose recorded
// or declared values hold a secret); the views of recorded instances
// (show, state show, show -json, history, gallery), through a Hider built
// from the configuration, since a record holds the request as it was sent;
// and the messages of an apply, through a Masker, since a service that
// refuses a request may quote it.
//
// It owns the placeholder a hidden value shows as (Text) and the
// flattening of a record's request into the configuration's attribute
// names (RecordAttrs), which is what it hides by name. It does not decide
// what is sensitive (config does), and it does not print: the views do.
package secrets
