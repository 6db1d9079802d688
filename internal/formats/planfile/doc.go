// Package planfile is the saved plan file of plan -out, apply PLANFILE
// and show PLANFILE: a JSON document versioned on its own (planFileVersion),
// apart from the public plan document, holding what apply needs to make
// exactly the changes the plan showed and what show needs to print it,
// with the inputs it was made with.
//
// It holds no secret: the values of variables that are sensitive, or
// that the service's token is made from, are left out (their names are
// kept, so apply can ask for them again). It does not decide whether a
// saved plan may still be applied; the operations that apply it do.
package planfile
