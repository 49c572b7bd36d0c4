package lua

import (
	"bytes"
	"strings"
	"testing"
)

// run51 runs src in a fresh state and returns what it printed (print
// writes through tostring, as 5.1's does) or the error it raised.
func run51(t *testing.T, src string) string {
	t.Helper()
	L := NewState()
	defer L.Close()
	var out bytes.Buffer
	L.SetGlobal("print", L.NewFunction(func(L *LState) int {
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				out.WriteByte('\t')
			}
			out.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		out.WriteByte('\n')
		return 0
	}))
	if err := L.DoString(src); err != nil {
		if ae, ok := err.(*ApiError); ok {
			out.WriteString("error: " + ae.Object.String())
		} else {
			out.WriteString("error: " + err.Error())
		}
	}
	return out.String()
}

func check51(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, c := range cases {
		if got := strings.TrimSuffix(run51(t, c[0]), "\n"); got != c[1] {
			t.Errorf("%s\n got: %q\nwant: %q", c[0], got, c[1])
		}
	}
}

// The outputs are lua5.1's on x86-64 Linux (glibc).
func TestNumbersPrintAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(0.1 + 0.2, 1e15, 2^53, 3, 100, 1e14, 1e-5, -2.5, 2^31)`,
			"0.3\t1e+15\t9.007199254741e+15\t3\t100\t1e+14\t1e-05\t-2.5\t2147483648"},
		{`print(123456789012345, 1e100, 2^63, -2^63, 1/3, 5e-324)`,
			"1.2345678901234e+14\t1e+100\t9.2233720368548e+18\t-9.2233720368548e+18\t0.33333333333333\t4.9406564584125e-324"},
		{`local z = 0 print(1/z, -1/z, z/z, -(z/z), math.huge, -math.huge)`,
			"inf\t-inf\t-nan\tnan\tinf\t-inf"},
		{`print(math.huge == 1/0, math.huge > 1e308)`, "true\ttrue"},
		{`local z = -1e-200 local y = z * 1e-200 print(y, tostring(y), y .. "", -0)`, "-0\t-0\t-0\t-0"},
		{`print(tostring(0.1 + 0.2), (0.1 + 0.2) .. "|" .. 1e15, 1/0 .. "")`, "0.3\t0.3|1e+15\tinf"},
		{`print(string.format("%s %s %5s|%-5s|", 0.1 + 0.2, 1/0, 1/0, -1/0))`, "0.3 inf   inf|-inf |"},
		{`print(string.format("%g %f %e %.2f %5.1g|%-6f|%+f|%G", 0/0, -(0/0), 1/0, -1/0, 0/0, 1/0, 1/0, 1/0))`,
			"-nan nan inf -inf  -nan|inf   |+inf|INF"},
		{`print(string.format("%g %g %10.3g|", 0.1 + 0.2, 1e20, 2/3))`, "0.3 1e+20      0.667|"},
		{`print(tonumber("0.3") == 0.3, tonumber("1e+15") == 1e15, tonumber("inf"), tonumber("-nan") ~= tonumber("-nan"), tonumber("-nan"), tonumber("nan(1)"))`,
			"true\ttrue\tinf\ttrue\t-nan\tnan"},
	})
}
