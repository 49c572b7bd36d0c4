//go:build noaccounting

package luaproc

// memAccounting false (the noaccounting build tag, with lua's
// accounting_off.go) leaves the memory bounds out: no watchdog, no Go
// memory limit, and, the lua package charging nothing, no MemoryCharge.
// For measuring what they cost only (BENCHMARKS.md); the tests of the
// bounds fail in such a build (a fatal out-of-memory: string.rep("x",
// 2^40) is no longer refused). bench/instrcount.sh builds it.
const memAccounting = false
