//go:build !noaccounting

package lua

// memAccounting: the memory accounting (memory.go) is on, as it always is
// but in a build with the noaccounting tag (accounting_off.go).
const memAccounting = true
