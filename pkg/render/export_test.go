package render

// YAMLScalar exposes yamlScalar to the tests.
var YAMLScalar = yamlScalar

// ShellQuote exposes shellQuote to the tests.
var ShellQuote = shellQuote

// SmallJSON is the size up to which YAML output converts a value in one
// piece.
var SmallJSON = &smallJSON
