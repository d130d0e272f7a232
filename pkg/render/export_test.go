package render

// YAMLScalar exposes yamlScalar to the tests.
var YAMLScalar = yamlScalar
