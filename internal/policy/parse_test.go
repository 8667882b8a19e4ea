package policy

// Parse compiles one rules file's text; name names it in messages. The
// command line loads files (Load); tests compile text.
func Parse(name string, b []byte) (*Policy, error) {
	return parseFile(newCompiler(), name, b)
}

// holds reports whether the predicate holds for args.
func (p predicate) holds(args any) bool { return p.holdsFor(p.path.p.Select(args)) }
