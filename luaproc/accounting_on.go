//go:build !noaccounting

package luaproc

// memAccounting: the memory bounds (memory.go) are on, as they always are
// but in a build with the noaccounting tag (accounting_off.go).
const memAccounting = true
