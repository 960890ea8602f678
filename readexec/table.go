package readexec

import "sort"

// Field describes one field of readexec's tables (fields.go), for the tests and tools that must
// agree with them: the differential test builds its random documents from these, and
// TestTablesMatchSchema holds them to the schema and to gqlgen's resolver interfaces.
type Field struct {
	Name     string // the field's name in the schema
	Child    string // the object type it shows, or "" for a scalar or an enum
	Resolver bool   // whether gqlgen runs a resolver for it (gqlgen.yml)
	Args     string // the arguments it takes: "", "id", "name", "postList", "commentList" or "reveal"
}

// argNames names each argKind as Field.Args does.
var argNames = [...]string{argsNone: "", argsID: "id", argsName: "name", argsPostList: "postList", argsCommentList: "commentList", argsReveal: "reveal"}

// Tables returns readexec's tables: the fields of every object type it writes, by type name,
// each type's fields sorted by name. A field not listed sends its operation to gqlgen.
func Tables() map[string][]Field {
	out := make(map[string][]Field, typeCount)
	for _, ti := range types[1:] {
		fs := make([]Field, 0, len(ti.fields))
		for name, sp := range ti.fields {
			f := Field{Name: name, Resolver: sp.resolver, Args: argNames[sp.args]}
			if sp.child != typeNone {
				f.Child = types[sp.child].name
			}
			fs = append(fs, f)
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
		out[ti.name] = fs
	}
	return out
}
