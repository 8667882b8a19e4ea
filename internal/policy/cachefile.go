package policy

import (
	"encoding/binary"
	"errors"
	"math"
)

// A cache file is cached written flat: a magic line, then each field in
// order, a number as a uvarint, a string or byte list as its length and
// its bytes, a list of numbers as its length and 4 little-endian bytes
// each. Reading it takes a few slices of the file as they are (the rules'
// blob is not copied), with no reflection and no initialiser run in every
// process, as encoding/gob's are.

// cacheMagic opens every cache file.
const cacheMagic = "askperm rules cache\n"

// encode is cf as a cache file.
func (cf *cached) encode() ([]byte, error) {
	if len(cf.Rules.Blob) > math.MaxUint32 {
		return nil, errors.New("rules too large for a cache")
	}
	e := &encoder{b: append(make([]byte, 0, len(cf.Rules.Blob)+len(cf.Rules.Ends)*4+1024), cacheMagic...)}
	e.uint(uint64(cf.Version))
	e.b = append(e.b, cf.Key[:]...)
	encodeList(e, cf.Rules.Files, e.str)
	e.int32s(cf.Rules.Firsts)
	e.bytes(cf.Rules.Blob)
	e.uint32s(cf.Rules.Ends)
	e.bool(cf.Verbs != nil)
	e.bytes(cf.Verbs)
	e.str(cf.VerbsFile)
	encodeList(e, cf.Annotations, func(a annotationTOML) { e.str(a.Tool); e.str(a.Mode) })
	e.str(cf.AnnotationsFile)
	encodeList(e, cf.Keyed, func(k cachedKeyed) { e.str(k.Path); e.bool(k.First); e.filed(k.Rules) })
	encodeList(e, cf.Heads, func(h cachedHead) { e.str(h.Dim); e.filed(h.Rules); e.int32s(h.All) })
	e.int32s(cf.Rest)
	return e.b, nil
}

// decodeCached is the cache file b, of this version; false when b is
// not one, short, or has bytes left over. The rules' blob shares b.
func decodeCached(b []byte) (*cached, bool) {
	if len(b) < len(cacheMagic) || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, false
	}
	d := &decoder{b: b[len(cacheMagic):]}
	cf := &cached{Version: int(d.uint())}
	if d.bad || cf.Version != cacheVersion {
		return nil, false
	}
	copy(cf.Key[:], d.take(uint64(len(cf.Key))))
	cf.Rules.Files = decodeList(d, d.str)
	cf.Rules.Firsts = d.int32s()
	cf.Rules.Blob = d.bytes()
	cf.Rules.Ends = d.uint32s()
	if verbs := d.bool(); verbs {
		cf.Verbs = d.bytes()
	} else {
		d.bytes()
	}
	cf.VerbsFile = d.str()
	cf.Annotations = decodeList(d, func() annotationTOML { return annotationTOML{Tool: d.str(), Mode: d.str()} })
	cf.AnnotationsFile = d.str()
	cf.Keyed = decodeList(d, func() cachedKeyed { return cachedKeyed{Path: d.str(), First: d.bool(), Rules: d.filed()} })
	cf.Heads = decodeList(d, func() cachedHead { return cachedHead{Dim: d.str(), Rules: d.filed(), All: d.int32s()} })
	cf.Rest = d.int32s()
	if d.bad || len(d.b) != 0 {
		return nil, false
	}
	return cf, true
}

type encoder struct{ b []byte }

// encodeList writes vs' length, then each of vs with one.
func encodeList[T any](e *encoder, vs []T, one func(T)) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		one(v)
	}
}

// decodeList reads a list encodeList wrote, each element with one; nil
// when empty.
func decodeList[T any](d *decoder, one func() T) []T {
	n := d.count()
	if n == 0 {
		return nil
	}
	vs := make([]T, n)
	for i := range vs {
		vs[i] = one()
	}
	return vs
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) bytes(b []byte) { e.uint(uint64(len(b))); e.b = append(e.b, b...) }

func (e *encoder) str(s string) { e.uint(uint64(len(s))); e.b = append(e.b, s...) }

func (e *encoder) uint32s(vs []uint32) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint32(e.b, v)
	}
}

func (e *encoder) int32s(vs []int32) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(v))
	}
}

func (e *encoder) filed(f filed) {
	e.str(f.Keys)
	e.uint32s(f.KeyEnds)
	e.int32s(f.Nos)
	e.uint32s(f.NoEnds)
}

// decoder reads a cache file; bad once anything did not fit, after
// which every read gives zero values.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// take is the next n bytes.
func (d *decoder) take(n uint64) []byte {
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

// count is a list's length, at most the bytes left (each element takes
// one at least), so that a forged length cannot make a huge list.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *decoder) bool() bool {
	b := d.take(1)
	if len(b) == 1 && b[0] > 1 {
		d.bad = true
	}
	return len(b) == 1 && b[0] == 1
}

func (d *decoder) bytes() []byte { return d.take(d.uint()) }

func (d *decoder) str() string { return string(d.bytes()) }

// words is the next list of 4-byte numbers, as bytes.
func (d *decoder) words() []byte {
	n := d.uint()
	if n > uint64(len(d.b))/4 {
		d.bad = true
		return nil
	}
	return d.take(4 * n)
}

func (d *decoder) uint32s() []uint32 {
	raw := d.words()
	vs := make([]uint32, len(raw)/4)
	for i := range vs {
		vs[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return vs
}

func (d *decoder) int32s() []int32 {
	raw := d.words()
	vs := make([]int32, len(raw)/4)
	for i := range vs {
		vs[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return vs
}

func (d *decoder) filed() filed {
	return filed{Keys: d.str(), KeyEnds: d.uint32s(), Nos: d.int32s(), NoEnds: d.uint32s()}
}
