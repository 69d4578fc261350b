package ui

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// What the tray icon shows and does, apart from the notification area's
// own calls (tray_windows.go), so that it is tested on every OS.

// trayView is the tray icon's tooltip and menu as the state has them.
type trayView struct {
	Tooltip    string
	HoldTitle  string
	CanHold    bool
	CanRelease bool
}

// maxTooltip is the tooltip's length: NOTIFYICONDATAW's szTip holds 128
// UTF-16 units since Windows 2000 and 64 before, and Wine showed only the
// first 64: kept under both.
const maxTooltip = 63

// trayView reads the current period and what the page holds. The tray
// reads it every second for as long as ui runs, page open or not, so it
// reads the period alone (Observe: NtQueryTimerResolution), not the whole
// query (registry values, the version, and the page's text).
func (s *Server) trayView() trayView {
	v := trayView{Tooltip: report.SimulatedPrefix(s.o.Scenario) + "tickscope: "}
	if current := s.host.Observe().Current100ns; current != 0 {
		v.Tooltip += "timer " + timerinfo.FormatPeriodMS(current) + " ms"
	} else {
		v.Tooltip += "no timer period on this OS"
	}
	s.mu.Lock()
	held, rec := s.held, s.recommended
	s.mu.Unlock()
	if held != nil && held.setting.Resolution100ns != 0 {
		v.Tooltip += ", ui holds " + timerinfo.FormatPeriodMS(held.setting.Resolution100ns) + " ms"
	} else if held != nil {
		v.Tooltip += ", ui holds " + held.setting.String()
	}
	v.CanRelease = held != nil
	v.CanHold = held == nil && rec != nil
	switch {
	case rec == nil:
		v.HoldTitle = "Hold at the recommended setting (run Bench first)"
	default:
		v.HoldTitle = "Hold at the recommended setting: " + rec.String()
	}
	if r := []rune(v.Tooltip); len(r) > maxTooltip {
		v.Tooltip = string(r[:maxTooltip-1]) + "…"
	}
	return v
}

// trayHold holds the last bench's recommendation, as the page's Hold with
// that value does.
func (s *Server) trayHold() *Outcome {
	s.mu.Lock()
	rec := s.recommended
	s.mu.Unlock()
	if rec == nil {
		return failed("", errors.New("no recommendation yet: run Bench in the page first"))
	}
	req := applyRequest{"resolution": strconv.FormatUint(uint64(rec.Resolution100ns), 10)}
	if rec.CPUDMALatencyUs != nil {
		req = applyRequest{"dma-latency": strconv.Itoa(int(*rec.CPUDMALatencyUs))}
	}
	out := s.hold(req)
	s.notify()
	return out
}

// trayIcon draws the tray icon, a dial with one hand, as an ICO file
// holding a 32×32 PNG (the form Windows Vista and later read; "ICO (file
// format)", the ICONDIRENTRY of a PNG image).
func trayIcon() []byte {
	const size = 32
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	face, rim, hand := color.NRGBA{0xea, 0xf0, 0xfb, 0xff}, color.NRGBA{0x2a, 0x5d, 0xb0, 0xff}, color.NRGBA{0xb0, 0x10, 0x10, 0xff}
	c := float64(size-1) / 2
	for y := range size {
		for x := range size {
			d := math.Hypot(float64(x)-c, float64(y)-c)
			switch {
			case d <= c-3:
				img.Set(x, y, face)
			case d <= c:
				img.Set(x, y, rim)
			}
		}
	}
	// The hand, from the centre towards one o'clock.
	for t := 0.0; t <= c-5; t += 0.25 {
		x, y := c+t*math.Sin(math.Pi/6), c-t*math.Cos(math.Pi/6)
		for _, dx := range []float64{-1, 0, 1} {
			img.Set(int(math.Round(x+dx)), int(math.Round(y)), hand)
		}
	}
	var pngData bytes.Buffer
	png.Encode(&pngData, img)
	var ico bytes.Buffer
	// ICONDIR: reserved 0, type 1 (icon), one image.
	binary.Write(&ico, binary.LittleEndian, [3]uint16{0, 1, 1})
	// ICONDIRENTRY: width, height, colours, reserved, planes, bits per
	// pixel, the image's size and its offset (after this 22-byte header).
	ico.Write([]byte{size, size, 0, 0})
	binary.Write(&ico, binary.LittleEndian, [2]uint16{1, 32})
	binary.Write(&ico, binary.LittleEndian, [2]uint32{uint32(pngData.Len()), 6 + 16})
	ico.Write(pngData.Bytes())
	return ico.Bytes()
}
