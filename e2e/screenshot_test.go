package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The screenshots in docs/ are made here: the terminal UI in a tmux pane
// (capture-pane with its colours, drawn cell by cell in Go Mono) and a
// zenity dialog on a private X server (ImageMagick's import). With
// ASKPERM_UPDATE_DOCS=1 the test draws them anew; otherwise it checks that
// they are there, are PNGs and stay small.
var screenshots = map[string]func(t *testing.T) []byte{
	"tui.png":    shootTUI,
	"dialog.png": shootDialog,
}

// maxScreenshot keeps the repository small: a screenshot is a few dozen KiB.
const maxScreenshot = 150 << 10

func TestDocsScreenshots(t *testing.T) {
	for name, shoot := range screenshots {
		t.Run(name, func(t *testing.T) {
			path := "../docs/" + name
			if os.Getenv("ASKPERM_UPDATE_DOCS") == "1" {
				if err := os.WriteFile(path, shoot(t), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (ASKPERM_UPDATE_DOCS=1 go test ./e2e/ -run TestDocsScreenshots draws it)", err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", name, err)
			}
			if cfg.Width < 300 || cfg.Height < 200 || len(b) > maxScreenshot {
				t.Fatalf("%s: %d×%d, %d bytes: want at least 300×200 and at most %d bytes", name, cfg.Width, cfg.Height, len(b), maxScreenshot)
			}
		})
	}
}

// shootTUI runs askperm's terminal UI on the README's sample request in an
// 80×24 tmux pane, as its first set-up command shows it, and draws the
// screen once the choices are up.
func shootTUI(t *testing.T) []byte {
	// A state directory, as a person has: allow for this session is offered.
	state := t.TempDir()
	p := startTmuxProgram(t, 80, 24, readFile(t, "requests/write-file.json"),
		fmt.Sprintf("XDG_STATE_HOME=%q %q --frontend tui --timeout 60s", state, bin))
	p.waitForCount("Deny once (n)", 1)
	time.Sleep(900 * time.Millisecond) // past the arming delay: the keys line, not "wait"
	screen := p.tmux("capture-pane", "-e", "-p", "-t", "t")
	p.tmux("send-keys", "-t", "t", "Escape")
	return renderScreen(t, screen, 80, 24)
}

// shootDialog runs askperm's zenity frontend on the same request and takes
// the dialog's window.
func shootDialog(t *testing.T) []byte {
	needDialogs(t, "zenity")
	if _, err := exec.LookPath("import"); err != nil {
		t.Skip("skipping: ImageMagick's import is not installed (Debian package imagemagick)")
	}
	x := startX(t)
	a := startDialog(t, x, "zenity", "write-file.json")
	w := a.waitDialog("zenity", nil)
	cmd := exec.Command("import", "-window", w.wid, "png:-")
	cmd.Env = []string{"DISPLAY=" + x.Display, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	w.keys("Escape")
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return encodePNG(t, img)
}

func encodePNG(t *testing.T, img image.Image) []byte {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// cell is one character of the screen with its attributes.
type cell struct {
	r            rune
	fg, bg       color.RGBA
	bold, faint  bool
	reverse, set bool
}

var (
	termFG = color.RGBA{0xd8, 0xd8, 0xd8, 0xff}
	termBG = color.RGBA{0x1c, 0x1c, 0x1c, 0xff}
	// sgrColours are the 16 colours of SGR 30–37 and 90–97 (xterm's, a little
	// softened).
	sgrColours = [16]color.RGBA{
		{0x1c, 0x1c, 0x1c, 0xff}, {0xe0, 0x55, 0x55, 0xff}, {0x6a, 0xc2, 0x5a, 0xff}, {0xd8, 0xb0, 0x4a, 0xff},
		{0x5a, 0x8a, 0xe0, 0xff}, {0xc0, 0x6a, 0xd0, 0xff}, {0x4a, 0xc0, 0xc8, 0xff}, {0xd8, 0xd8, 0xd8, 0xff},
		{0x70, 0x70, 0x70, 0xff}, {0xff, 0x70, 0x70, 0xff}, {0x8a, 0xe2, 0x7a, 0xff}, {0xf0, 0xd0, 0x6a, 0xff},
		{0x7a, 0xaa, 0xff, 0xff}, {0xe0, 0x8a, 0xf0, 0xff}, {0x6a, 0xe0, 0xe8, 0xff}, {0xff, 0xff, 0xff, 0xff},
	}
)

// parseScreen reads capture-pane -e output (text and SGR sequences, split
// by x/ansi's decoder) into rows × cols cells; a wide character takes its
// cell and blanks the next.
func parseScreen(screen string, cols, rows int) [][]cell {
	grid := make([][]cell, rows)
	for i := range grid {
		grid[i] = make([]cell, cols)
	}
	cur := cell{fg: termFG, bg: termBG}
	p := ansi.NewParser()
	for y, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if y >= rows {
			break
		}
		var state byte
		for x := 0; l != ""; {
			seq, width, n, next := ansi.DecodeSequence(l, state, p)
			state, l = next, l[n:]
			if width == 0 {
				if ansi.Cmd(p.Command()).Final() == 'm' && strings.HasPrefix(seq, "\x1b[") {
					sgr(&cur, p.Params())
				}
				continue
			}
			if x < cols {
				c := cur
				c.r, c.set = []rune(seq)[0], true
				grid[y][x] = c
			}
			x += width
		}
	}
	return grid
}

// sgr applies one Select Graphic Rendition sequence's parameters.
func sgr(c *cell, ps ansi.Params) {
	if len(ps) == 0 {
		*c = cell{fg: termFG, bg: termBG}
	}
	for i := 0; i < len(ps); i++ {
		n := ps[i].Param(0)
		switch {
		case n == 0:
			*c = cell{fg: termFG, bg: termBG}
		case n == 1:
			c.bold = true
		case n == 2:
			c.faint = true
		case n == 7:
			c.reverse = true
		case n == 22:
			c.bold, c.faint = false, false
		case n == 27:
			c.reverse = false
		case n == 39:
			c.fg = termFG
		case n == 49:
			c.bg = termBG
		case n/10 == 3 || n/10 == 9:
			c.fg = sgrColour(n)
		case n/10 == 4 || n/10 == 10:
			c.bg = sgrColour(n - 10)
		case n == 38 || n == 48:
			col, used := extendedColour(ps[i+1:])
			i += used
			if n == 38 {
				c.fg = col
			} else {
				c.bg = col
			}
		}
	}
}

// sgrColour is the colour of SGR 30–37 (normal) or 90–97 (bright).
func sgrColour(n int) color.RGBA {
	if n >= 90 {
		return sgrColours[n-90+8]
	}
	return sgrColours[n-30]
}

// extendedColour reads the parameters after 38 or 48: 5;K (256 colours) or
// 2;R;G;B, and says how many it used.
func extendedColour(ps ansi.Params) (color.RGBA, int) {
	at := func(i int) int {
		if i < len(ps) {
			return ps[i].Param(0)
		}
		return 0
	}
	switch at(0) {
	case 5:
		return xterm256(at(1)), 2
	case 2:
		return color.RGBA{uint8(at(1)), uint8(at(2)), uint8(at(3)), 0xff}, 4
	}
	return termFG, 0
}

// xterm256 is colour k of xterm's 256-colour palette.
func xterm256(k int) color.RGBA {
	switch {
	case k < 16:
		return sgrColours[k]
	case k < 232:
		k -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return color.RGBA{level(k / 36), level(k / 6 % 6), level(k % 6), 0xff}
	default:
		v := uint8(8 + 10*(k-232))
		return color.RGBA{v, v, v, 0xff}
	}
}

// renderScreen draws the screen in Go Mono, 14 px, with a margin.
func renderScreen(t *testing.T, screen string, cols, rows int) []byte {
	faces := map[bool]font.Face{}
	for bold, ttf := range map[bool][]byte{false: gomono.TTF, true: gomonobold.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			t.Fatal(err)
		}
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 14, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			t.Fatal(err)
		}
		faces[bold] = face
	}
	adv, _ := faces[false].GlyphAdvance('M')
	cw, ch, margin := adv.Ceil(), 18, 10
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*margin, rows*ch+2*margin))
	draw.Draw(img, img.Bounds(), image.NewUniform(termBG), image.Point{}, draw.Src)
	for y, row := range parseScreen(screen, cols, rows) {
		for x, c := range row {
			if !c.set {
				continue
			}
			fg, bg := c.fg, c.bg
			if c.reverse {
				fg, bg = bg, fg
			}
			if c.faint {
				fg = color.RGBA{uint8((int(fg.R) + int(bg.R)) / 2), uint8((int(fg.G) + int(bg.G)) / 2), uint8((int(fg.B) + int(bg.B)) / 2), 0xff}
			}
			x0, y0 := margin+x*cw, margin+y*ch
			box := image.Rect(x0, y0, x0+cw, y0+ch)
			draw.Draw(img, box, image.NewUniform(bg), image.Point{}, draw.Src)
			switch c.r {
			case '─':
				draw.Draw(img, image.Rect(x0, y0+ch/2, x0+cw, y0+ch/2+1), image.NewUniform(fg), image.Point{}, draw.Src)
				continue
			case '│':
				draw.Draw(img, image.Rect(x0+cw/2, y0, x0+cw/2+1, y0+ch), image.NewUniform(fg), image.Point{}, draw.Src)
				continue
			case '┃':
				draw.Draw(img, image.Rect(x0+cw/2-1, y0, x0+cw/2+2, y0+ch), image.NewUniform(fg), image.Point{}, draw.Src)
				continue
			case ' ':
				continue
			}
			d := font.Drawer{Dst: img, Src: image.NewUniform(fg), Face: faces[c.bold], Dot: fixed.P(x0, y0+14)}
			d.DrawString(string(c.r))
		}
	}
	return encodePNG(t, img)
}
