package policy

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// genCached is a cache file's contents of generated shape: lists empty
// and not, strings of any bytes, numbers of any sign.
func genCached(r *rand.Rand) *cached {
	str := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return string(b)
	}
	int32s := func() []int32 {
		vs := make([]int32, r.IntN(5))
		for i := range vs {
			vs[i] = int32(r.Uint32())
		}
		return vs
	}
	uint32s := func() []uint32 {
		vs := make([]uint32, r.IntN(5))
		for i := range vs {
			vs[i] = r.Uint32()
		}
		return vs
	}
	fld := func() filed { return filed{Keys: str(), KeyEnds: uint32s(), Nos: int32s(), NoEnds: uint32s()} }
	cf := &cached{Version: cacheVersion, VerbsFile: str(), AnnotationsFile: str(), Rest: int32s()}
	for i := range cf.Key {
		cf.Key[i] = byte(r.UintN(256))
	}
	for range r.IntN(3) {
		cf.Rules.Files = append(cf.Rules.Files, str())
	}
	cf.Rules.Firsts, cf.Rules.Blob, cf.Rules.Ends = int32s(), []byte(str()), uint32s()
	if r.IntN(3) > 0 {
		cf.Verbs = []byte(str())
	}
	for range r.IntN(3) {
		cf.Annotations = append(cf.Annotations, annotationTOML{Tool: str(), Mode: str()})
	}
	for range r.IntN(3) {
		cf.Keyed = append(cf.Keyed, cachedKeyed{Path: str(), First: r.IntN(2) == 0, Rules: fld()})
	}
	for range r.IntN(3) {
		cf.Heads = append(cf.Heads, cachedHead{Dim: str(), Rules: fld(), All: int32s()})
	}
	return cf
}

// same reports whether a and b hold the same, an empty list the same as
// none (the verbs excepted: nil is no [verbs]).
func same(a, b *cached) bool {
	if (a.Verbs == nil) != (b.Verbs == nil) {
		return false
	}
	norm := func(cf *cached) *cached {
		c := *cf
		v := reflect.ValueOf(&c).Elem()
		var walk func(reflect.Value)
		walk = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Slice:
				if v.Len() == 0 && v.CanSet() {
					v.Set(reflect.Zero(v.Type()))
				}
				for i := range v.Len() {
					walk(v.Index(i))
				}
			case reflect.Struct:
				for i := range v.NumField() {
					walk(v.Field(i))
				}
			}
		}
		walk(v)
		return &c
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// Every cache file reads back as written.
func TestCacheFileRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		cf := genCached(r)
		b, err := cf.encode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeCached(b)
		if !ok || !same(cf, got) {
			t.Fatalf("wrote %+v\nread %+v (%v)", cf, got, ok)
		}
		// Any cut short, or with a byte more, is refused.
		if _, ok := decodeCached(b[:r.IntN(len(b))]); ok {
			t.Fatal("a file cut short was read")
		}
		if _, ok := decodeCached(append(b, 0)); ok {
			t.Fatal("a file with a byte left over was read")
		}
	}
}

// No bytes make decodeCached panic or allocate beyond the file's size.
func FuzzDecodeCached(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		b, _ := genCached(r).encode()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, ok := decodeCached(b)
		if !ok {
			return
		}
		again, err := cf.encode()
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := decodeCached(again); !ok || !same(cf, got) {
			t.Fatalf("read %+v, wrote and read again %+v", cf, got)
		}
	})
}
