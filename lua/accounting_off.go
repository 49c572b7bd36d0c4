//go:build noaccounting

package lua

// memAccounting false (the noaccounting build tag) compiles the memory
// accounting out: charge and chargeGrowth (memory.go) do nothing, so no
// state is charged and no owner is asked (luaproc's MemoryCharge, its
// walks and its bounds never run). For measuring what the accounting
// costs only (BENCHMARKS.md; bench/instrcount.sh builds it): such a
// build has no memory bound, and the tests of the bounds fail in it.
const memAccounting = false
