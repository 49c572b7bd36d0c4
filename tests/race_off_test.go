//go:build !race

package tests

var raceFlags []string
