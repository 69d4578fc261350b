// The CI tools' own module, so that what only CI needs (a JSON-schema
// validator, a YAML parser) is no dependency of tickscope, and
// `go mod tidy` at the root, which skips .ci, cannot drop it.
module tickscope-ci

go 1.26.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.yaml.in/yaml/v3 v3.0.5
)

require golang.org/x/text v0.14.0 // indirect
