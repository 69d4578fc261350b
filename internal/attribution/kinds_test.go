package attribution

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// Kinds holds every Kind constant attribute.go declares, in order: what
// reads a file back (explain's) takes no other kind.
func TestKindsListsEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "attribute.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []Kind
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Kind" {
			return true
		}
		for _, e := range v.Values {
			lit, ok := e.(*ast.BasicLit)
			if !ok {
				t.Fatalf("a Kind constant's value is not a literal: %T", e)
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			declared = append(declared, Kind(s))
		}
		return true
	})
	if len(declared) == 0 || !slices.Equal(Kinds, declared) {
		t.Errorf("Kinds %q, attribute.go declares %q", Kinds, declared)
	}
}
