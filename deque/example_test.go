package deque_test

import (
	"fmt"

	"github.com/luarun/luarun/deque"
)

// The owner works LIFO at the bottom; a thief takes the oldest half.
func Example() {
	mine := deque.New[string](4)
	for _, job := range []string{"a", "b", "c", "d", "e"} {
		mine.PushBottom(job)
	}

	theirs := deque.New[string](4)
	n := mine.StealHalfInto(theirs) // usually on another goroutine
	fmt.Println("stolen:", n)

	for {
		job, ok := mine.PopBottom()
		if !ok {
			break
		}
		fmt.Println("owner runs", job)
	}
	job, _ := theirs.Steal()
	fmt.Println("thief runs", job, "first")
	// Output:
	// stolen: 3
	// owner runs e
	// owner runs d
	// thief runs a first
}
