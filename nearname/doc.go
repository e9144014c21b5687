// Package nearname finds, for a path that does not exist, the existing
// name its caller most likely meant: a sibling a typo away ("clac.py"),
// the same name with or without an extension ("calc" for "calc.py"), or
// another case. Every door that reports a missing path (the model-facing
// tools, the HTTP API and so the CLI) phrases its hint from it.
package nearname
