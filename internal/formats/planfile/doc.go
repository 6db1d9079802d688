// Package planfile is the saved plan file of plan -out, apply PLANFILE
// and show PLANFILE: a JSON document versioned on its own (planFileVersion),
// apart from the public plan document, holding the changes the plan
// showed and the inputs it was made with: apply and show plan again from
// those inputs and check the new plan against the file's changes.
//
// It holds no secret: the values of variables that are sensitive, or
// that the service's token is made from, are left out (their names are
// kept, so apply can ask for them again). It does not decide whether a
// saved plan may still be applied or shown; package operation does.
package planfile
