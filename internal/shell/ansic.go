package shell

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// ansiCEscapes are the one-letter escapes of $'…' (bash's ANSI-C
// quoting).
var ansiCEscapes = sync.OnceValue(func() map[byte]byte {
	return map[byte]byte{
		'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
		'\\': '\\', '\'': '\'', '"': '"', '?': '?',
	}
})

// ansiC decodes the raw text of $'…' as bash does: \n \t \\ \' \" \xHH
// \uHHHH \UHHHHHHHH \NNN (octal) \cX and the rest; a NUL ends the
// string. An escape bash does not know stays as written. ok is false
// when the text cannot be known (an invalid code point).
func ansiC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		if e, ok := ansiCEscapes()[c]; ok {
			b.WriteByte(e)
			continue
		}
		var digits, base, most int
		switch c {
		case 'x':
			base, most = 16, 2
		case 'u':
			base, most = 16, 4
		case 'U':
			base, most = 16, 8
		case 'c':
			if i+1 < len(s) {
				i++
				if upper(s[i]) == '@' {
					return b.String(), true // \c@ is a NUL, which ends the string
				}
				b.WriteByte(upper(s[i]) ^ 0x40)
				continue
			}
		default:
			if c >= '0' && c <= '7' {
				base, most, i = 8, 3, i-1 // the digit is the number's first
			}
		}
		if base == 0 {
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		for digits < most && i+1+digits < len(s) && isDigit(s[i+1+digits], base) {
			digits++
		}
		if digits == 0 {
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		n, _ := strconv.ParseUint(s[i+1:i+1+digits], base, 32)
		i += digits
		switch {
		case n == 0:
			return b.String(), true // bash ends the string at a NUL
		case c == 'u' || c == 'U':
			if !utf8.ValidRune(rune(n)) {
				return b.String(), false
			}
			b.WriteRune(rune(n))
		default:
			b.WriteByte(byte(n))
		}
	}
	return b.String(), true
}

func isDigit(c byte, base int) bool {
	_, err := strconv.ParseUint(string(c), base, 8)
	return err == nil
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
