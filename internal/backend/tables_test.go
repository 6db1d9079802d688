package backend

// The providers' tables, which package catalog holds once the one list
// of providers registers them.
import _ "github.com/genform/genform/internal/provider/all"
