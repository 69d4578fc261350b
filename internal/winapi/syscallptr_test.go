package winapi

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSyscallPointers holds every Go file of the module, whatever its
// build constraints (so this runs on any OS, the Windows files included),
// to unsafe.Pointer's rule 4: a pointer converted to uintptr is kept alive
// and in place (not moved by a stack copy) only when the conversion is in
// the argument list of the system call itself. Converted anywhere else (in
// a caller of a wrapper, into a slice built before the call) it is a plain
// integer to the runtime, and a goroutine's stack copied before the call
// leaves it pointing at the old stack.
//
// A conversion is uintptr(E) where E is unsafe.Pointer(...), unsafe.Add(...)
// or a name the enclosing function declares as an unsafe.Pointer (a
// parameter, a var, or := of unsafe.Pointer(...) or unsafe.Add(...)). It is
// allowed:
//   - as an argument, itself and not inside another expression, of
//     syscall.SyscallN or syscall.Syscall, Syscall6, Syscall9, Syscall12,
//     Syscall15, Syscall18 (package syscall, whatever its local name): the
//     functions the compiler treats so (go:uintptrkeepalive), and the only
//     ones that mkwinsyscall's generated code calls;
//   - as an operand of a subtraction whose other operand is a conversion
//     too: an offset between two addresses, an integer that is not passed
//     as an address;
//   - as the left operand of % by a constant: an alignment.
//
// Anything else fails. A Go function that makes a system call takes its
// pointers as unsafe.Pointer or typed pointers, which the garbage
// collector and the stack copier see.
func TestSyscallPointers(t *testing.T) {
	// go test runs a package's tests in its source directory; a test
	// binary run elsewhere (the Windows one under Wine) has no tree to
	// check.
	if _, err := os.Stat("syscallptr_test.go"); err != nil {
		t.Skip("not run in internal/winapi's source directory: no source to check")
	}
	root := filepath.Join("..", "..")
	var files, allowed int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		n, bad, err := checkSyscallPointers(path)
		if err != nil {
			return err
		}
		allowed += n
		for _, b := range bad {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s:%s: pointer converted to uintptr outside a system call's argument list: %s", filepath.ToSlash(rel), b.pos, b.expr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d files, %d conversions in system calls", files, allowed)
	// The generated bindings alone convert dozens of pointers in
	// SyscallN's argument list: fewer means the walk missed the tree.
	if files < 100 || allowed < 20 {
		t.Fatalf("checked %d files and %d conversions in system calls: the walk did not see the module", files, allowed)
	}
}

// The shapes TestSyscallPointers forbids, each of which must fail it.
func TestSyscallPointersFinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  string
		bad  int
	}{
		{"in a system call", `syscall.SyscallN(fn, uintptr(unsafe.Pointer(&x)), uintptr(p))`, 0},
		{"renamed syscall", `sc.SyscallN(fn, uintptr(unsafe.Pointer(&x)))`, 0},
		{"an offset", `_ = uintptr(unsafe.Pointer(&b[1])) - uintptr(unsafe.Pointer(&b[0]))`, 0},
		{"an alignment", `_ = uintptr(p) % 16`, 0},
		{"to a wrapper", `wrapper(uintptr(unsafe.Pointer(&x)))`, 1},
		{"to a method", `o.call(7, uintptr(unsafe.Pointer(&x)))`, 1},
		{"inside an argument", `syscall.SyscallN(fn, append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)`, 1},
		{"into a slice", `args = append(args, uintptr(unsafe.Add(p, 8)))`, 1},
		{"into a variable", `a := uintptr(p); syscall.SyscallN(fn, a)`, 1},
		{"an unsafe.Pointer variable", `q := unsafe.Pointer(&x); wrapper(uintptr(q))`, 1},
		{"a half offset", `_ = uintptr(unsafe.Pointer(&x)) - 8`, 1},
		{"other syscall functions", `syscall.Wrapper(uintptr(p))`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\nimport (\n\t\"unsafe\"\n\t\"syscall\"\n\tsc \"syscall\"\n)\nfunc f(fn uintptr, p unsafe.Pointer) {\n\t" + tt.src + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, bad := syscallPointers(fset, f)
			if len(bad) != tt.bad {
				t.Errorf("%s: %d forbidden conversions found, want %d: %v", tt.src, len(bad), tt.bad, bad)
			}
		})
	}
}

type badConversion struct{ pos, expr string }

func checkSyscallPointers(path string) (allowed int, bad []badConversion, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, nil, err
	}
	allowed, bad = syscallPointers(fset, f)
	return allowed, bad, nil
}

// syscallPointers counts the conversions of f in a system call's argument
// list and lists those anywhere else.
func syscallPointers(fset *token.FileSet, f *ast.File) (allowed int, bad []badConversion) {
	// The local names of unsafe and syscall (a file may import a package
	// under two names, as TestSyscallPointersFinds's source does).
	unsafeName := ""
	syscallNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch path {
		case "unsafe":
			unsafeName = name
		case "syscall":
			syscallNames[name] = true
		}
	}
	if unsafeName == "" {
		return 0, nil
	}

	isUnsafeCall := func(e ast.Expr, fns ...string) bool {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != unsafeName {
			return false
		}
		for _, fn := range fns {
			if sel.Sel.Name == fn {
				return true
			}
		}
		return false
	}
	isUnsafePointerType := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == unsafeName && sel.Sel.Name == "Pointer"
	}

	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		// The names the function (and its closures) declares as an
		// unsafe.Pointer.
		pointers := map[string]bool{}
		addFields := func(fl *ast.FieldList) {
			if fl == nil {
				return
			}
			for _, field := range fl.List {
				if isUnsafePointerType(field.Type) {
					for _, n := range field.Names {
						pointers[n.Name] = true
					}
				}
			}
		}
		addFields(fn.Recv)
		addFields(fn.Type.Params)
		addFields(fn.Type.Results)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				addFields(n.Type.Params)
				addFields(n.Type.Results)
			case *ast.ValueSpec:
				if n.Type != nil && isUnsafePointerType(n.Type) {
					for _, name := range n.Names {
						pointers[name.Name] = true
					}
				}
				for i, v := range n.Values {
					if i < len(n.Names) && isUnsafeCall(v, "Pointer", "Add") {
						pointers[n.Names[i].Name] = true
					}
				}
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE && len(n.Lhs) == len(n.Rhs) {
					for i, v := range n.Rhs {
						if id, ok := n.Lhs[i].(*ast.Ident); ok && isUnsafeCall(v, "Pointer", "Add") {
							pointers[id.Name] = true
						}
					}
				}
			}
			return true
		})

		isConversion := func(e ast.Expr) bool {
			call, ok := ast.Unparen(e).(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return false
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "uintptr" {
				return false
			}
			arg := ast.Unparen(call.Args[0])
			if isUnsafeCall(arg, "Pointer", "Add") {
				return true
			}
			id, ok := arg.(*ast.Ident)
			return ok && pointers[id.Name]
		}

		// The conversions in an allowed place, found first from their
		// parents; every other conversion is forbidden.
		inPlace := map[ast.Expr]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, isSel := n.Fun.(*ast.SelectorExpr)
				if !isSel {
					return true
				}
				if x, isIdent := sel.X.(*ast.Ident); !isIdent || !syscallNames[x.Name] {
					return true
				}
				switch sel.Sel.Name {
				case "SyscallN", "Syscall", "Syscall6", "Syscall9", "Syscall12", "Syscall15", "Syscall18":
					for _, arg := range n.Args {
						if isConversion(arg) {
							inPlace[ast.Unparen(arg)] = true
							allowed++
						}
					}
				}
			case *ast.BinaryExpr:
				switch {
				case n.Op == token.SUB && isConversion(n.X) && isConversion(n.Y):
					inPlace[ast.Unparen(n.X)] = true
					inPlace[ast.Unparen(n.Y)] = true
				case n.Op == token.REM && isConversion(n.X):
					if _, isLit := ast.Unparen(n.Y).(*ast.BasicLit); isLit {
						inPlace[ast.Unparen(n.X)] = true
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, isCall := n.(*ast.CallExpr); isCall && isConversion(call) && !inPlace[call] {
				var b strings.Builder
				printer.Fprint(&b, fset, call)
				bad = append(bad, badConversion{pos: strconv.Itoa(fset.Position(call.Pos()).Line), expr: b.String()})
			}
			return true
		})
	}
	return allowed, bad
}
