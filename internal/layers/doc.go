// Package layers holds the test that keeps the layers of ARCHITECTURE.md
// by pattern rather than by name: every package under pkg/ that is not a
// foundation, the report package or render is an engine, so an engine
// added tomorrow is held to the engines' rules the day it is added.
// depguard (.golangci.yml) keeps the rules that name fixed packages
// (cluster access, cobra); this test those that name layers.
package layers
