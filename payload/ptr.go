package payload

import (
	"reflect"
	"unsafe"
)

// ptrOf and mapID give a list's backing array and a map an identity for
// cycle detection.
func ptrOf(p *any) uintptr { return uintptr(unsafe.Pointer(p)) }

func mapID(m any) uintptr { return reflect.ValueOf(m).Pointer() }
