package ui

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// TestTrayIcon: the icon is an ICO holding one 32×32 PNG that is drawn.
func TestTrayIcon(t *testing.T) {
	ico := trayIcon()
	var header [3]uint16
	binary.Read(bytes.NewReader(ico), binary.LittleEndian, &header)
	if header != [3]uint16{0, 1, 1} || ico[6] != 32 || ico[7] != 32 {
		t.Fatalf("ICO header % x", ico[:8])
	}
	size, offset := binary.LittleEndian.Uint32(ico[14:]), binary.LittleEndian.Uint32(ico[18:])
	if int(offset+size) != len(ico) {
		t.Fatalf("image at %d, %d bytes, in a file of %d", offset, size, len(ico))
	}
	img, err := png.Decode(bytes.NewReader(ico[offset:]))
	if err != nil {
		t.Fatal(err)
	}
	drawn := 0
	for y := range 32 {
		for x := range 32 {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
				drawn++
			}
		}
	}
	if drawn < 32*32/2 {
		t.Errorf("%d of 1024 pixels drawn", drawn)
	}
}

// TestTrayView: the tooltip is the current period; Hold needs a bench's
// recommendation and no hold; Release needs a hold.
func TestTrayView(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	v := s.trayView()
	if v.Tooltip != "SIMULATED  tickscope: timer 15.6250 ms" || v.CanHold || v.CanRelease || !strings.Contains(v.HoldTitle, "run Bench first") {
		t.Errorf("at rest: %+v", v)
	}
	if out := s.trayHold(); !strings.Contains(out.Error, "run Bench") {
		t.Errorf("tray hold without a bench: %+v", out)
	}
	s.mu.Lock()
	s.recommended = &timerinfo.Setting{Resolution100ns: 5118}
	s.mu.Unlock()
	if v := s.trayView(); !v.CanHold || !strings.HasSuffix(v.HoldTitle, "0.5118 ms (5118 x 100ns)") {
		t.Errorf("with a recommendation: %+v", v)
	}
	if out := s.trayHold(); out.Error != "" || out.Command != "tickscope apply --resolution 5118"+modelOnly {
		t.Fatalf("tray hold: %+v", out)
	}
	v = s.trayView()
	if v.CanHold || !v.CanRelease || v.Tooltip != "SIMULATED  tickscope: timer 0.5118 ms, ui holds 0.5118 ms" {
		t.Errorf("holding: %+v", v)
	}
	// Quitting releases the hold.
	s.Close()
	if q, _ := s.host.Query(); q.Windows.Current100ns != q.Windows.Coarsest100ns {
		t.Errorf("after Close the model's period is %d", q.Windows.Current100ns)
	}
}
