package render

// YAMLScalar exposes yamlScalar to the tests.
var YAMLScalar = yamlScalar

// ShellQuote exposes shellQuote to the tests.
var ShellQuote = shellQuote
